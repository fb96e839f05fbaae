import Foundation
import QBText

/// How `eval` cuts a text into the windows it scores.
///
/// The text is split into documents at `separator` (when given; otherwise it is one
/// document), each tokenized without special tokens. Each document's ids are cut into
/// non-overlapping pieces of `context − 1` ids (the last piece may be shorter), and each
/// window is BOS followed by one piece, so every window starts as the model was trained to
/// start and never spans two documents. Within a window, the logits at position i predict
/// id i + 1; every id of the text is predicted exactly once, BOS never (it is given, not
/// predicted). Perplexity is exp of the mean negative log-likelihood over those
/// predicted ids. The stride equals the piece length, so no id is scored twice and the
/// context an id is predicted from ranges from 1 to `context − 1` ids (on average about
/// half the window), which is how llama2.c measured its published validation loss too
/// (512-id training sequences).
///
/// Without a BOS id (a tokenizer that has none), a window is `context` ids and its first
/// id is given rather than predicted.
public struct PerplexityWindows: Sendable {
    public struct Window: Sendable {
        /// What the model is fed: BOS (if any) then the piece.
        public var input: [TokenID]
        /// The ids predicted by positions scoredFrom ..< scoredFrom + targets.count:
        /// input[scoredFrom + 1 ...].
        public var targets: [TokenID]
        /// The first position whose logits are scored (0 for the default windows).
        public var scoredFrom: Int = 0
    }

    /// How the text is cut.
    public enum Mode: String, Sendable, CaseIterable {
        /// Non-overlapping BOS + (context − 1)-id windows, every id scored once (above).
        case scoreAll = "all"
        /// llama.cpp's `llama-perplexity`: the whole text tokenized once (BOS first when the
        /// tokenizer adds one), cut into `context`-id chunks whose first id is replaced by
        /// BOS, only the second half of each chunk scored (positions context/2 ..< context − 1
        /// predicting ids context/2 + 1 ..< context).
        case llamaPerplexity = "llama-perplexity"
    }

    public let windows: [Window]
    public let context: Int
    public let bos: TokenID?
    public let documents: Int
    public var mode: Mode = .scoreAll

    /// Ids predicted over all windows.
    public var predictedTokens: Int { windows.reduce(0) { $0 + $1.targets.count } }

    /// Cuts `text` for a model of window `context` (≥ 2). `maxTokens` caps the ids scored
    /// (whole windows first, the last one cut), for quick runs.
    public init(text: String, tokenizer: any Tokenizer, context: Int, separator: String? = nil, maxTokens: Int? = nil) {
        self.context = max(2, context)
        bos = tokenizer.bosTokenID
        let parts = separator.map { text.components(separatedBy: $0) } ?? [text]
        let docs = parts.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }
        documents = docs.count
        let piece = bos == nil ? self.context : self.context - 1
        var out: [Window] = []
        var budget = maxTokens ?? Int.max
        for doc in docs where budget > 0 {
            let ids = tokenizer.encode(doc, addSpecialTokens: false, parseSpecialTokens: false)
            var start = 0
            while start < ids.count && budget > 0 {
                let end = min(ids.count, start + piece)
                let input = (bos.map { [$0] } ?? []) + ids[start..<end]
                guard input.count >= 2 else { break }
                var targets = Array(input.dropFirst())
                if targets.count > budget { targets = Array(targets.prefix(budget)) }
                budget -= targets.count
                out.append(Window(input: Array(input.prefix(targets.count + 1)), targets: targets))
                start = end
            }
        }
        windows = out
    }

    /// llama-perplexity's chunks (`Mode.llamaPerplexity`): the first `chunks` (all when nil)
    /// of the text's `ids.count / context` chunks. Throws when the text gives fewer than
    /// 2 × context ids, as llama-perplexity refuses it.
    public init(llamaPerplexityText text: String, tokenizer: any Tokenizer, context: Int, chunks: Int?, path: String) throws {
        let ids = tokenizer.encode(text, addSpecialTokens: true, parseSpecialTokens: false)
        try self.init(llamaPerplexityIDs: ids, bos: tokenizer.addsBOS ? tokenizer.bosTokenID : nil, context: context, chunks: chunks, path: path)
    }

    /// The same chunks over ids already tokenized (a `--kl-divergence-base` file's).
    /// `minimumChunks`: 2 for a text (llama-perplexity's own check), 1 for a base file's ids.
    public init(llamaPerplexityIDs ids: [TokenID], bos: TokenID?, context: Int, chunks: Int?, path: String, minimumChunks: Int = 2) throws {
        guard context >= 4 else { throw LocatedError(path: path, "llama-perplexity windows need a context of at least 4 ids, not \(context)") }
        guard ids.count >= minimumChunks * context else {
            throw LocatedError(path: path, "the text gives \(ids.count) ids; llama-perplexity windows of \(context) need at least \(minimumChunks * context)")
        }
        self.context = context
        self.bos = bos
        documents = 1
        mode = .llamaPerplexity
        let available = ids.count / context
        let n = min(chunks ?? available, available)
        let first = context / 2
        windows = (0..<n).map { c in
            var input = Array(ids[(c * context)..<((c + 1) * context)])
            if let b = bos { input[0] = b }
            return Window(input: input, targets: Array(input[(first + 1)...]), scoredFrom: first)
        }
    }
}
