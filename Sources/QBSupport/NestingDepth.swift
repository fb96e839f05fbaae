/// How deeply a JSON or YAML text nests, found by a flat scan before any parser sees it.
/// Foundation's JSONDecoder and JSONSerialization, and libyaml under Yams, recurse once per
/// level: 10,000 nested `[` overflow the stack of the thread that parses them. Files from
/// outside (suites, results, configs, chat histories, safetensors headers) are checked
/// with `check` first and refused with the line where the nesting goes too deep.
public enum NestingDepth {
    /// Deeper than this is refused: no file these parsers read nests past a dozen levels,
    /// and every parser used copes with a few hundred on any thread.
    public static let maximum = 256

    /// The nesting failure: the line (1-based) where the text first nests deeper than the
    /// limit.
    public struct TooDeep: Error, Sendable, CustomStringConvertible {
        public let line: Int
        public let limit: Int
        public var description: String { "nesting deeper than \(limit) levels at line \(line)" }
    }

    /// JSON: brackets and braces outside strings.
    public static func checkJSON<C: Collection>(_ bytes: C, limit: Int = maximum) throws(TooDeep) where C.Element == UInt8 {
        var depth = 0, line = 1
        var inString = false, escaped = false
        for b in bytes {
            if b == 0x0A { line += 1 }
            if inString {
                if escaped { escaped = false } else if b == 0x5C { escaped = true } else if b == 0x22 { inString = false }
                continue
            }
            switch b {
            case 0x22: inString = true
            case 0x5B, 0x7B:
                depth += 1
                if depth > limit { throw TooDeep(line: line, limit: limit) }
            case 0x5D, 0x7D: depth = max(0, depth - 1)
            default: break
            }
        }
    }

    /// YAML: flow brackets outside quotes and comments, plus each line's block nesting
    /// (an upper bound: its indentation, counting every `- `, `? ` and `: ` before the
    /// first other character as a level).
    public static func checkYAML(_ text: String, limit: Int = maximum) throws(TooDeep) {
        var flow = 0, line = 0
        for raw in text.utf8.split(separator: 0x0A, omittingEmptySubsequences: false) {
            line += 1
            var block = 0, i = raw.startIndex
            // Leading indentation and block indicators.
            while i < raw.endIndex {
                let b = raw[i]
                if b == 0x20 {
                    block += 1
                } else if (b == 0x2D || b == 0x3F || b == 0x3A), raw.index(after: i) < raw.endIndex, raw[raw.index(after: i)] == 0x20 {
                    block += 1
                } else {
                    break
                }
                i = raw.index(after: i)
            }
            // Indentation counts columns, not levels: a level takes at least one column.
            if block > limit * 4 { throw TooDeep(line: line, limit: limit) }
            var quote: UInt8? = nil
            while i < raw.endIndex {
                let b = raw[i]
                if let q = quote {
                    if b == q { quote = nil } else if b == 0x5C && q == 0x22 { i = raw.index(after: i); if i == raw.endIndex { break } }
                } else {
                    switch b {
                    case 0x22, 0x27: quote = b
                    case 0x23: i = raw.endIndex; continue
                    case 0x5B, 0x7B:
                        flow += 1
                        if flow + block / 4 > limit { throw TooDeep(line: line, limit: limit) }
                    case 0x5D, 0x7D: flow = max(0, flow - 1)
                    default: break
                    }
                }
                i = raw.index(after: i)
            }
        }
    }
}
