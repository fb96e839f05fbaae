/// A token declared in tokenizer.json's `added_tokens`: matched in the raw text before
/// pre-tokenization, so it is never split by the BPE model.
struct AddedToken: Sendable, Equatable {
    let id: TokenID
    let content: String
    let special: Bool
    let singleWord: Bool
    let lstrip: Bool
    let rstrip: Bool
    let normalized: Bool
}

/// One piece of text after added tokens were taken out: either plain text for the
/// pre-tokenizer or an added token's id.
struct AddedTokenSplit: Equatable {
    var range: Range<Int>
    var id: TokenID?
}

/// Finds added tokens in text the way the `tokenizers` crate's AddedVocabulary does: a
/// leftmost-longest, non-overlapping scan (Aho-Corasick `LeftmostLongest` there, a byte trie
/// here), first for tokens with `normalized: false` over the whole text, then for
/// `normalized: true` tokens over the remaining plain pieces. Special tokens are skipped
/// (left as text) unless special-token parsing is on; the skipped span is not searched again,
/// exactly as the crate's `find_iter` loop does.
struct AddedTokenMatcher: Sendable {
    /// A byte trie; node 0 is the root.
    private struct Trie: Sendable {
        var children: [[UInt8: Int32]] = [[:]]
        /// Index into `tokens` of the token ending at each node, or -1.
        var terminal: [Int32] = [-1]
        /// Bytes that start some token: a quick reject for most text positions.
        var firstByte = [Bool](repeating: false, count: 256)

        var isEmpty: Bool { children[0].isEmpty }

        mutating func insert(_ bytes: [UInt8], token: Int32) {
            guard let first = bytes.first else { return }
            firstByte[Int(first)] = true
            var node = 0
            for b in bytes {
                if let child = children[node][b] {
                    node = Int(child)
                } else {
                    children.append([:])
                    terminal.append(-1)
                    let child = children.count - 1
                    children[node][b] = Int32(child)
                    node = child
                }
            }
            // A later duplicate of the same content replaces the earlier one, like the
            // crate's content → id map.
            terminal[node] = token
        }

        /// The longest token starting at `i` (ending by `end`): (token index, end offset).
        func longest(_ p: UnsafeBufferPointer<UInt8>, at i: Int, end: Int) -> (Int, Int)? {
            guard firstByte[Int(p[i])] else { return nil }
            var node = 0
            var best: (Int, Int)?
            var j = i
            while j < end, let child = children[node][p[j]] {
                node = Int(child)
                j += 1
                let t = terminal[node]
                if t >= 0 { best = (Int(t), j) }
            }
            return best
        }
    }

    let tokens: [AddedToken]
    /// Whether each trie holds a token that is not special: when neither does and special
    /// tokens are not parsed, nothing can match and the scan is skipped (a long text with
    /// Llama 3's 256 special tokens would otherwise be walked byte by byte for nothing).
    private let rawHasPlain: Bool
    private let normalizedHasPlain: Bool
    private let rawTrie: Trie
    private let normalizedTrie: Trie

    /// `normalizer` is the tokenizer's: tokens declared `normalized` are matched in normalized
    /// text by their normalized content, as the crate does (so with Llama 2's `Prepend("▁")`
    /// normalizer `<s>` matches `▁<s>`).
    init(_ tokens: [AddedToken], normalizer: Normalizer? = nil) {
        self.tokens = tokens
        var raw = Trie()
        var normalized = Trie()
        for (index, token) in tokens.enumerated() where !token.content.isEmpty {
            if token.normalized {
                let content = normalizer?.normalize(token.content) ?? token.content
                normalized.insert(Array(content.utf8), token: Int32(index))
            } else {
                raw.insert(Array(token.content.utf8), token: Int32(index))
            }
        }
        rawTrie = raw
        rawHasPlain = tokens.contains { !$0.content.isEmpty && !$0.normalized && !$0.special }
        normalizedHasPlain = tokens.contains { !$0.content.isEmpty && $0.normalized && !$0.special }
        normalizedTrie = normalized
    }

    var isEmpty: Bool { rawTrie.isEmpty && normalizedTrie.isEmpty }
    var hasRawTokens: Bool { !rawTrie.isEmpty }
    var hasNormalizedTokens: Bool { !normalizedTrie.isEmpty }

    /// The first pass alone: tokens with `normalized: false`, found in the raw text.
    func splitRaw(_ text: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, parseSpecialTokens: Bool) -> [AddedTokenSplit] {
        guard !range.isEmpty else { return [] }
        guard !rawTrie.isEmpty, parseSpecialTokens || rawHasPlain else { return [AddedTokenSplit(range: range, id: nil)] }
        return findMatches(text, range, rawTrie, parseSpecialTokens)
    }

    /// The second pass alone: tokens with `normalized: true`, found in normalized text.
    func splitNormalized(_ text: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, parseSpecialTokens: Bool) -> [AddedTokenSplit] {
        guard !range.isEmpty else { return [] }
        guard !normalizedTrie.isEmpty, parseSpecialTokens || normalizedHasPlain else { return [AddedTokenSplit(range: range, id: nil)] }
        return findMatches(text, range, normalizedTrie, parseSpecialTokens)
    }

    /// Splits `text` into plain pieces and added tokens, in order.
    func split(_ text: UnsafeBufferPointer<UInt8>, parseSpecialTokens: Bool) -> [AddedTokenSplit] {
        guard !text.isEmpty else { return [] }
        let first = rawTrie.isEmpty || (!parseSpecialTokens && !rawHasPlain)
            ? [AddedTokenSplit(range: 0..<text.count, id: nil)]
            : findMatches(text, 0..<text.count, rawTrie, parseSpecialTokens)
        guard !normalizedTrie.isEmpty, parseSpecialTokens || normalizedHasPlain else { return first }
        var out: [AddedTokenSplit] = []
        for piece in first {
            if piece.id == nil {
                out.append(contentsOf: findMatches(text, piece.range, normalizedTrie, parseSpecialTokens))
            } else {
                out.append(piece)
            }
        }
        return out
    }

    private func findMatches(
        _ p: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ trie: Trie, _ parseSpecial: Bool
    ) -> [AddedTokenSplit] {
        var splits: [AddedTokenSplit] = []
        var startOffset = range.lowerBound
        var i = range.lowerBound
        let end = range.upperBound
        while i < end {
            guard let (index, matchEnd) = trie.longest(p, at: i, end: end) else {
                i += 1
                continue
            }
            var start = i
            var stop = matchEnd
            i = matchEnd
            let token = tokens[index]
            if token.special && !parseSpecial { continue }
            if token.singleWord {
                let startSpace = start == range.lowerBound || !Self.endsWithWord(p, range.lowerBound, start)
                let stopSpace = stop == end || !Self.startsWithWord(p, stop, end)
                if !startSpace || !stopSpace { continue }
            }
            if token.lstrip {
                start = max(Self.trailingWhitespaceStart(p, range.lowerBound, start), startOffset)
            }
            if token.rstrip {
                stop = Self.leadingWhitespaceEnd(p, stop, end)
            }
            if startOffset < start {
                splits.append(AddedTokenSplit(range: startOffset..<start, id: nil))
            }
            // With rstrip the crate can report a span overlapping the next match; clamp so
            // plain pieces stay well-formed (the emitted ids are the same).
            splits.append(AddedTokenSplit(range: min(start, stop)..<stop, id: token.id))
            startOffset = max(startOffset, stop)
        }
        if startOffset < end {
            splits.append(AddedTokenSplit(range: startOffset..<end, id: nil))
        }
        return splits
    }

    // `\w`, `\s` as the Rust `regex` crate (Unicode mode) defines them for the
    // single_word / lstrip / rstrip options.
    private static func isWord(_ v: UInt32) -> Bool {
        guard let s = Unicode.Scalar(v) else { return false }
        let p = s.properties
        if p.isAlphabetic || p.isJoinControl { return true }
        switch p.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark, .decimalNumber, .connectorPunctuation:
            return true
        default:
            return false
        }
    }

    private static func isSpace(_ v: UInt32) -> Bool {
        Unicode.Scalar(v)?.properties.isWhitespace ?? false
    }

    /// The last scalar of p[lower..<upper] is a word character.
    private static func endsWithWord(_ p: UnsafeBufferPointer<UInt8>, _ lower: Int, _ upper: Int) -> Bool {
        var j = upper - 1
        while j > lower && p[j] & 0xC0 == 0x80 { j -= 1 }
        guard j >= lower else { return false }
        return isWord(Scanner.scalar(p, j, upper).value)
    }

    private static func startsWithWord(_ p: UnsafeBufferPointer<UInt8>, _ lower: Int, _ upper: Int) -> Bool {
        guard lower < upper else { return false }
        return isWord(Scanner.scalar(p, lower, upper).value)
    }

    private static func trailingWhitespaceStart(_ p: UnsafeBufferPointer<UInt8>, _ lower: Int, _ upper: Int) -> Int {
        var start = upper
        while start > lower {
            var j = start - 1
            while j > lower && p[j] & 0xC0 == 0x80 { j -= 1 }
            guard isSpace(Scanner.scalar(p, j, start).value) else { break }
            start = j
        }
        return start
    }

    private static func leadingWhitespaceEnd(_ p: UnsafeBufferPointer<UInt8>, _ lower: Int, _ upper: Int) -> Int {
        var e = lower
        while e < upper {
            let (v, l) = Scanner.scalar(p, e, upper)
            guard isSpace(v) else { break }
            e += l
        }
        return e
    }
}
