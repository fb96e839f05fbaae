import Foundation
import QBSupport

/// tiktoken rank files (Meta's Llama 3 `tokenizer.model`): one `base64(token bytes) rank`
/// line per token, ranks 0..<n. Special tokens are not in the file; the model's code
/// numbers them from n.
///
/// The tokenizer is a byte-level `BPETokenizer`: tiktoken's `byte_pair_merge` merges the
/// adjacent pair whose joined bytes have the lowest rank, leftmost on ties, and takes a
/// piece that is itself a token whole. That is `BPEModel` with `ignore_merges` and
/// `joinedBytes` pair ranks (a pair's rank is looked up by its bytes, as tiktoken does,
/// rather than in a merge list), so ids are tiktoken's by construction (and checked
/// against it in the tests).
public enum Tiktoken {
    /// Meta's Llama 3 split pattern (`pat_str` in llama-models' tokenizer.py).
    public static let llama3Pattern = PreTokenizer.SplitPattern.llama3Text

    /// The 256 special tokens of Llama 3 / 3.1 / 3.2 / 3.3 in id order, named as
    /// meta-llama/llama-models `models/llama3/tokenizer.py` names them.
    public static let llama3SpecialTokens: [String] = {
        let named = [
            "<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>", "<|reserved_special_token_1|>",
            "<|finetune_right_pad_id|>", "<|step_id|>", "<|start_header_id|>", "<|end_header_id|>",
            "<|eom_id|>", "<|eot_id|>", "<|python_tag|>", "<|image|>",
        ]
        return named + (0..<(256 - named.count)).map { "<|reserved_special_token_\($0 + 2)|>" }
    }()

    /// Reads a Llama 3 tokenizer.model: its ranks, the Llama 3 pattern and special tokens,
    /// BOS `<|begin_of_text|>` added, and generation ending at `<|end_of_text|>`,
    /// `<|eom_id|>` or `<|eot_id|>` (Meta's stop tokens) unless `eosTokenIDs` says otherwise.
    public static func llama3(contentsOf url: URL, eosTokenIDs: Set<TokenID>? = nil) throws -> BPETokenizer {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw TokenizerError.unreadable(path: url.path, reason: FoundationErrorText.reason(error))
        }
        return try llama3(data: data, path: url.path, eosTokenIDs: eosTokenIDs)
    }

    /// `llama3(contentsOf:)` from the file's bytes; `path` only names the source in errors.
    public static func llama3(data: Data, path: String, eosTokenIDs: Set<TokenID>? = nil) throws -> BPETokenizer {
        let ranks = try readRanks(data, path: path)
        let base = TokenID(ranks.count)
        let specials = llama3SpecialTokens.enumerated().map { (base + TokenID($0.offset), $0.element) }
        let stops = eosTokenIDs ?? [base + 1, base + 8, base + 9]
        return BPETokenizer(parts: try parts(
            ranks: ranks, path: path, pattern: .llama3, specialTokens: specials, bos: base, eos: stops))
    }

    /// Whether `data` looks like a rank file: its first line is base64, a space, a number.
    public static func isRankFile(_ data: Data) -> Bool {
        let head = data.prefix(512)
        guard let end = head.firstIndex(of: 0x0A) ?? (head.count == data.count ? head.endIndex : nil) else { return false }
        var line = Array(head[head.startIndex..<end])
        if line.last == 0x0D { line.removeLast() }
        guard let space = line.firstIndex(of: 0x20), space > 0, space + 1 < line.count else { return false }
        return line[..<space].allSatisfy { base64Value($0) != nil || $0 == 0x3D }
            && line[(space + 1)...].allSatisfy { (0x30...0x39).contains($0) }
    }

    /// The token bytes of each rank, in rank order. Ranks must be exactly 0..<n, every
    /// token distinct, and every single byte a token (tiktoken's merge needs them).
    static func readRanks(_ data: Data, path: String) throws -> [[UInt8]] {
        let bytes = [UInt8](data)
        var byRank: [[UInt8]?] = []
        var seen: [[UInt8]: Int] = [:]
        var lineNumber = 0
        var start = 0
        while start < bytes.count {
            var end = start
            while end < bytes.count && bytes[end] != 0x0A { end += 1 }
            lineNumber += 1
            var stop = end
            if stop > start && bytes[stop - 1] == 0x0D { stop -= 1 }
            defer { start = end + 1 }
            guard stop > start else { continue }
            let line = bytes[start..<stop]
            func bad(_ reason: String) -> TokenizerError {
                .malformed(path: path, field: "line \(lineNumber)", reason: reason)
            }
            guard let space = line.firstIndex(of: 0x20) else { throw bad("expected 'base64 rank'") }
            guard let token = base64Decode(line[line.startIndex..<space]) else { throw bad("token is not valid base64") }
            guard !token.isEmpty else { throw bad("empty token") }
            let digits = line[(space + 1)...]
            guard !digits.isEmpty, digits.count <= 9, digits.allSatisfy({ (0x30...0x39).contains($0) }),
                let rank = Int(String(decoding: digits, as: UTF8.self))
            else { throw bad("rank is not a number") }
            guard rank < BPETokenizer.maximumVocabularySize else { throw bad("rank \(rank) is beyond \(BPETokenizer.maximumVocabularySize)") }
            if let earlier = seen[token] { throw bad("token repeats the one of rank \(earlier)") }
            seen[token] = rank
            if rank >= byRank.count {
                guard rank <= 2 * bytes.count else { throw bad("rank \(rank) is far beyond the number of lines") }
                byRank.append(contentsOf: repeatElement(nil, count: rank + 1 - byRank.count))
            }
            guard byRank[rank] == nil else { throw bad("rank \(rank) appears twice") }
            byRank[rank] = token
        }
        guard !byRank.isEmpty else { throw TokenizerError.malformed(path: path, field: "(file)", reason: "no ranks") }
        var ranks: [[UInt8]] = []
        ranks.reserveCapacity(byRank.count)
        for (rank, token) in byRank.enumerated() {
            guard let token else {
                throw TokenizerError.malformed(path: path, field: "(file)", reason: "rank \(rank) is missing (ranks must be 0..<\(byRank.count))")
            }
            ranks.append(token)
        }
        for b in 0...255 where seen[[UInt8(b)]] == nil {
            throw TokenizerError.malformed(path: path, field: "(file)", reason: "byte 0x\(String(b, radix: 16)) has no rank")
        }
        return ranks
    }

    /// A byte-level BPE tokenizer over tiktoken ranks.
    static func parts(
        ranks: [[UInt8]], path: String, pattern: PreTokenizer.SplitPattern,
        specialTokens: [(TokenID, String)], bos: TokenID?, eos: Set<TokenID>
    ) throws -> BPETokenizer.Parts {
        var rankOf: [ArraySlice<UInt8>: TokenID] = [:]
        rankOf.reserveCapacity(ranks.count)
        var byteIDs = [TokenID](repeating: -1, count: 256)
        for (rank, token) in ranks.enumerated() {
            rankOf[token[...]] = TokenID(rank)
            if token.count == 1 { byteIDs[Int(token[0])] = TokenID(rank) }
        }
        guard !byteIDs.contains(-1) else {
            throw TokenizerError.malformed(path: path, field: "(file)", reason: "not every byte has a rank")
        }
        let size = ranks.count + specialTokens.count
        var texts = [String?](repeating: nil, count: max(size, (specialTokens.map { Int($0.0) }.max() ?? 0) + 1))
        for (rank, token) in ranks.enumerated() { texts[rank] = ByteLevel.encode(token) }
        var added: [AddedToken] = []
        for (id, name) in specialTokens {
            guard Int(id) >= ranks.count, Int(id) < texts.count else {
                throw TokenizerError.malformed(path: path, field: "special tokens", reason: "\(name) has id \(id), which a rank uses")
            }
            texts[Int(id)] = name
            added.append(AddedToken(id: id, content: name, special: true, singleWord: false, lstrip: false, rstrip: false, normalized: false))
        }
        let model = BPEModel(
            symbols: .bytes, byteIDs: byteIDs, pairRanks: .joinedBytes, wholeTokens: rankOf,
            ignoreMerges: true, unknownID: nil, fuseUnknown: false)
        return BPETokenizer.Parts(
            path: path, kind: .byteLevel, config: nil, chatTemplate: nil, tokenTexts: texts, added: added,
            model: model, normalizer: nil, preTokenizer: PreTokenizer(stages: [.split(pattern)]), decoder: .byteLevel,
            prefix: bos.map { [$0] } ?? [], suffix: [], bos: bos, eos: eos, addsEOS: false)
    }

    // MARK: Base64

    private static func base64Value(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x41...0x5A: return c - 0x41
        case 0x61...0x7A: return c - 0x61 + 26
        case 0x30...0x39: return c - 0x30 + 52
        case 0x2B: return 62
        case 0x2F: return 63
        default: return nil
        }
    }

    /// Standard base64 with padding (as Python's b64encode writes it); nil if malformed.
    static func base64Decode(_ s: ArraySlice<UInt8>) -> [UInt8]? {
        guard s.count % 4 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(s.count / 4 * 3)
        var i = s.startIndex
        while i < s.endIndex {
            let last = i + 4 == s.endIndex
            let c2 = s[i + 2], c3 = s[i + 3]
            guard let v0 = base64Value(s[i]), let v1 = base64Value(s[i + 1]) else { return nil }
            out.append(v0 << 2 | v1 >> 4)
            if c2 == 0x3D {
                guard last, c3 == 0x3D else { return nil }
                break
            }
            guard let v2 = base64Value(c2) else { return nil }
            out.append(v1 << 4 | v2 >> 2)
            if c3 == 0x3D {
                guard last else { return nil }
                break
            }
            guard let v3 = base64Value(c3) else { return nil }
            out.append(v2 << 6 | v3)
            i += 4
        }
        return out
    }
}
