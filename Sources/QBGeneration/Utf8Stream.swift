/// Turns a stream of byte fragments into text that never splits a character: bytes of an
/// incomplete UTF-8 sequence are held back until the sequence is whole. Bytes that can
/// never form a character become U+FFFD, as a full decode would make them.
public struct Utf8Stream: Sendable {
    private var pending: [UInt8] = []

    public init() {}

    /// Appends bytes and returns the text that is now complete.
    public mutating func push(_ bytes: [UInt8]) -> String {
        pending += bytes
        let keep = Self.incompleteTail(pending)
        let ready = Array(pending[..<(pending.count - keep)])
        pending.removeFirst(pending.count - keep)
        return String(decoding: ready, as: UTF8.self)
    }

    /// Whatever is left at the end of the stream.
    public mutating func flush() -> String {
        defer { pending = [] }
        return String(decoding: pending, as: UTF8.self)
    }

    /// Length of a trailing UTF-8 sequence that has started but not finished.
    static func incompleteTail(_ b: [UInt8]) -> Int {
        var i = b.count - 1
        var continuation = 0
        while i >= 0 && continuation < 3 && (b[i] & 0xC0) == 0x80 { i -= 1; continuation += 1 }
        guard i >= 0 else { return 0 }
        let lead = b[i]
        let need: Int
        switch lead {
        case 0xC2...0xDF: need = 1
        case 0xE0...0xEF: need = 2
        case 0xF0...0xF4: need = 3
        default: return 0
        }
        return continuation < need ? continuation + 1 : 0
    }
}
