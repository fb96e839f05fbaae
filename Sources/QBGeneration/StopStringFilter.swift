/// Cuts generated text at the first stop string without ever letting any of it out.
///
/// Text goes in as it is decoded; what comes out is everything that can no longer be the
/// start of a stop string. A suffix that is a proper prefix of some stop string is held
/// back until the next piece decides it, so a stop string split across tokens is caught
/// too. Matching is on UTF-8 bytes (as llama.cpp and the OpenAI API match); since both
/// the text and the stop strings are valid UTF-8, a match or a held-back suffix always
/// starts on a character boundary, and what is released is whole characters.
public struct StopStringFilter: Sendable {
    private let stops: [[UInt8]]
    private let longest: Int
    private var pending: [UInt8] = []
    /// The stop string that matched, once one has.
    public private(set) var matched: String?

    /// Empty strings are ignored (they would match before any text).
    public init(_ stopStrings: [String]) {
        stops = stopStrings.map { Array($0.utf8) }.filter { !$0.isEmpty }
        longest = stops.map(\.count).max() ?? 0
    }

    /// Adds decoded text; returns the text now safe to show. After a match it returns the
    /// text before the stop string and then only empty strings.
    public mutating func push(_ text: String) -> String {
        guard matched == nil else { return "" }
        guard !stops.isEmpty else { return text }
        pending.append(contentsOf: text.utf8)
        if let (start, stop) = firstMatch() {
            matched = String(decoding: stops[stop], as: UTF8.self)
            let out = String(decoding: pending[..<start], as: UTF8.self)
            pending = []
            return out
        }
        let keep = heldBackLength()
        let out = String(decoding: pending[..<(pending.count - keep)], as: UTF8.self)
        pending.removeFirst(pending.count - keep)
        return out
    }

    /// At the end of generation: the held-back text, which turned out not to be a stop string.
    public mutating func flush() -> String {
        defer { pending = [] }
        return matched == nil ? String(decoding: pending, as: UTF8.self) : ""
    }

    /// Earliest start of any stop string in `pending`; on equal starts the shorter (it
    /// completes first).
    private func firstMatch() -> (start: Int, stop: Int)? {
        var best: (start: Int, stop: Int)?
        for (s, stop) in stops.enumerated() where stop.count <= pending.count {
            for start in 0...(pending.count - stop.count) {
                if let b = best, start > b.start || (start == b.start && stop.count >= stops[b.stop].count) { break }
                if pending[start] == stop[0] && pending[start..<(start + stop.count)].elementsEqual(stop) {
                    best = (start, s)
                    break
                }
            }
        }
        return best
    }

    /// The longest suffix of `pending` that some stop string starts with.
    private func heldBackLength() -> Int {
        var length = min(pending.count, longest - 1)
        while length > 0 {
            let tail = pending[(pending.count - length)...]
            if stops.contains(where: { $0.count > length && $0[..<length].elementsEqual(tail) }) { return length }
            length -= 1
        }
        return 0
    }
}
