import Foundation

/// Python's `str` behaviour where templates can observe it. Python strings are sequences
/// of code points, so everything here works on unicode scalars (Swift's String API works
/// on grapheme clusters and compares canonically equivalent strings as equal).
package enum PyText {
    // MARK: Character classes

    /// `str.isspace()` and the `\s` of Python's `re` on str patterns.
    static func isSpace(_ c: Unicode.Scalar) -> Bool {
        switch c.value {
        case 0x09...0x0D, 0x1C...0x20, 0x85, 0xA0, 0x1680, 0x2000...0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000:
            return true
        default:
            return false
        }
    }

    /// Line boundaries of `str.splitlines()`.
    static func isLineBreak(_ c: Unicode.Scalar) -> Bool {
        switch c.value {
        case 0x0A, 0x0B, 0x0C, 0x0D, 0x1C, 0x1D, 0x1E, 0x85, 0x2028, 0x2029: return true
        default: return false
        }
    }

    static func isCased(_ c: Unicode.Scalar) -> Bool { c.properties.isCased }

    static func isAlpha(_ c: Unicode.Scalar) -> Bool {
        switch c.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter: return true
        default: return false
        }
    }

    static func isDigit(_ c: Unicode.Scalar) -> Bool { c.properties.numericType == .decimal || c.properties.numericType == .digit }

    static func isDecimal(_ c: Unicode.Scalar) -> Bool { c.properties.numericType == .decimal }

    static func isNumeric(_ c: Unicode.Scalar) -> Bool { c.properties.numericType != nil }

    /// `str.isprintable()`: everything but control, format, surrogate, private-use,
    /// unassigned and separator characters (the ASCII space is printable).
    static func isPrintable(_ c: Unicode.Scalar) -> Bool {
        if c == " " { return true }
        switch c.properties.generalCategory {
        case .control, .format, .surrogate, .privateUse, .unassigned, .lineSeparator, .paragraphSeparator,
            .spaceSeparator:
            return false
        default:
            return true
        }
    }

    // MARK: Printing

    /// `repr(str)`: single quotes unless the text has a single quote and no double quote.
    static func repr(_ s: String) -> String {
        let hasSingle = s.unicodeScalars.contains("'")
        let hasDouble = s.unicodeScalars.contains("\"")
        let quote: Unicode.Scalar = hasSingle && !hasDouble ? "\"" : "'"
        var out = String.UnicodeScalarView()
        out.append(quote)
        for c in s.unicodeScalars {
            switch c {
            case "\\": out.append(contentsOf: "\\\\".unicodeScalars)
            case "\n": out.append(contentsOf: "\\n".unicodeScalars)
            case "\r": out.append(contentsOf: "\\r".unicodeScalars)
            case "\t": out.append(contentsOf: "\\t".unicodeScalars)
            default:
                if c == quote {
                    out.append("\\")
                    out.append(c)
                } else if c.value < 0x7F && c.value >= 0x20 {
                    out.append(c)
                } else if isPrintable(c) && c.value != 0x7F {
                    out.append(c)
                } else if c.value <= 0xFF {
                    out.append(contentsOf: ("\\x" + hex(c.value, 2)).unicodeScalars)
                } else if c.value <= 0xFFFF {
                    out.append(contentsOf: ("\\u" + hex(c.value, 4)).unicodeScalars)
                } else {
                    out.append(contentsOf: ("\\U" + hex(c.value, 8)).unicodeScalars)
                }
            }
        }
        out.append(quote)
        return String(out)
    }

    static func hex(_ v: UInt32, _ width: Int) -> String {
        let s = String(v, radix: 16)
        return String(repeating: "0", count: max(0, width - s.count)) + s
    }

    /// `repr(float)`. Swift's shortest round-trip description uses the same digits and the
    /// same switch to exponent notation (below 1e-4 and from 1e16) as Python.
    static func floatRepr(_ d: Double) -> String {
        if d.isNaN { return "nan" }
        if d.isInfinite { return d < 0 ? "-inf" : "inf" }
        return d.description
    }

    /// HTML escaping as markupsafe does it.
    static func htmlEscape(_ s: String) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count)
        for c in s.unicodeScalars {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "'": out += "&#39;"
            case "\"": out += "&#34;"
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }

    // MARK: Comparison and search

    /// Code-point order (Python compares strings that way).
    static func compare(_ a: String, _ b: String) -> Int {
        // UTF-8 byte order is code-point order.
        var i = a.utf8.makeIterator(), j = b.utf8.makeIterator()
        while true {
            switch (i.next(), j.next()) {
            case (nil, nil): return 0
            case (nil, _): return -1
            case (_, nil): return 1
            case (let x?, let y?): if x != y { return x < y ? -1 : 1 }
            }
        }
    }

    static func equal(_ a: String, _ b: String) -> Bool { a.utf8.elementsEqual(b.utf8) }

    /// Byte offsets of the non-overlapping occurrences of `needle`, left to right.
    /// How many non-overlapping times `needle` occurs (what `occurrences` would find,
    /// without making the list).
    static func occurrenceCount(of needle: [UInt8], in hay: [UInt8], limit: Int = Int.max) -> Int {
        guard !needle.isEmpty, needle.count <= hay.count else { return 0 }
        var i = 0, found = 0
        let last = hay.count - needle.count
        while i <= last && found < limit {
            if hay[i] == needle[0] && hay[i..<(i + needle.count)].elementsEqual(needle) {
                found += 1
                i += needle.count
            } else {
                i += 1
            }
        }
        return found
    }

    static func occurrences(of needle: [UInt8], in hay: [UInt8], limit: Int = Int.max) -> [Int] {
        var found: [Int] = []
        guard !needle.isEmpty, needle.count <= hay.count else { return found }
        var i = 0
        let last = hay.count - needle.count
        while i <= last && found.count < limit {
            if hay[i] == needle[0] && hay[i..<(i + needle.count)].elementsEqual(needle) {
                found.append(i)
                i += needle.count
            } else {
                i += 1
            }
        }
        return found
    }

    package static func contains(_ hay: String, _ needle: String) -> Bool {
        if needle.isEmpty { return true }
        return !occurrences(of: Array(needle.utf8), in: Array(hay.utf8), limit: 1).isEmpty
    }

    static func hasPrefix(_ s: String, _ p: String) -> Bool { s.utf8.starts(with: p.utf8) }

    static func hasSuffix(_ s: String, _ p: String) -> Bool {
        let a = Array(s.utf8), b = Array(p.utf8)
        return b.count <= a.count && a[(a.count - b.count)...].elementsEqual(b)
    }

    static func string(_ bytes: ArraySlice<UInt8>) -> String { String(decoding: bytes, as: UTF8.self) }

    // MARK: str methods

    /// `str.strip/lstrip/rstrip(chars)`; nil chars means whitespace.
    static func strip(_ s: String, _ chars: String?, left: Bool, right: Bool) -> String {
        let scalars = Array(s.unicodeScalars)
        let set = chars.map { Set($0.unicodeScalars) }
        func strippable(_ c: Unicode.Scalar) -> Bool { set.map { $0.contains(c) } ?? isSpace(c) }
        var lo = 0, hi = scalars.count
        if left { while lo < hi && strippable(scalars[lo]) { lo += 1 } }
        if right { while hi > lo && strippable(scalars[hi - 1]) { hi -= 1 } }
        if lo == 0 && hi == scalars.count { return s }
        var v = String.UnicodeScalarView()
        v.append(contentsOf: scalars[lo..<hi])
        return String(v)
    }

    /// `str.split(sep, maxsplit)`; nil sep splits on runs of whitespace.
    static func split(_ s: String, _ sep: String?, maxSplit: Int = -1) -> [String] {
        if let sep {
            let hay = Array(s.utf8)
            let hits = occurrences(of: Array(sep.utf8), in: hay, limit: maxSplit < 0 ? Int.max : maxSplit)
            var parts: [String] = []
            var start = 0
            for h in hits {
                parts.append(string(hay[start..<h]))
                start = h + sep.utf8.count
            }
            parts.append(string(hay[start...]))
            return parts
        }
        let scalars = Array(s.unicodeScalars)
        var parts: [String] = []
        var i = 0
        while i < scalars.count {
            while i < scalars.count && isSpace(scalars[i]) { i += 1 }
            if i == scalars.count { break }
            if maxSplit >= 0 && parts.count == maxSplit {
                // The rest, with leading whitespace gone and trailing whitespace kept.
                var v = String.UnicodeScalarView()
                v.append(contentsOf: scalars[i...])
                parts.append(String(v))
                return parts
            }
            let start = i
            while i < scalars.count && !isSpace(scalars[i]) { i += 1 }
            var v = String.UnicodeScalarView()
            v.append(contentsOf: scalars[start..<i])
            parts.append(String(v))
        }
        return parts
    }

    /// `str.rsplit(sep, maxsplit)`.
    static func rsplit(_ s: String, _ sep: String?, maxSplit: Int = -1) -> [String] {
        if maxSplit < 0 { return split(s, sep, maxSplit: -1) }
        if let sep {
            let hay = Array(s.utf8), needle = Array(sep.utf8)
            var hits: [Int] = []
            var i = hay.count - needle.count
            while i >= 0 && hits.count < maxSplit {
                if hay[i..<(i + needle.count)].elementsEqual(needle) {
                    hits.append(i)
                    i -= needle.count
                } else {
                    i -= 1
                }
            }
            var parts: [String] = []
            var end = hay.count
            for h in hits {
                parts.append(string(hay[(h + needle.count)..<end]))
                end = h
            }
            parts.append(string(hay[0..<end]))
            return parts.reversed()
        }
        let scalars = Array(s.unicodeScalars)
        var parts: [String] = []
        var i = scalars.count
        while i > 0 {
            while i > 0 && isSpace(scalars[i - 1]) { i -= 1 }
            if i == 0 { break }
            if parts.count == maxSplit {
                var v = String.UnicodeScalarView()
                v.append(contentsOf: scalars[0..<i])
                parts.append(String(v))
                break
            }
            let end = i
            while i > 0 && !isSpace(scalars[i - 1]) { i -= 1 }
            var v = String.UnicodeScalarView()
            v.append(contentsOf: scalars[i..<end])
            parts.append(String(v))
        }
        return parts.reversed()
    }

    /// `str.splitlines(keepends)`.
    static func splitLines(_ s: String, keepEnds: Bool = false) -> [String] {
        let scalars = Array(s.unicodeScalars)
        var lines: [String] = []
        var start = 0, i = 0
        while i < scalars.count {
            let c = scalars[i]
            if isLineBreak(c) {
                var end = i + 1
                if c == "\r" && end < scalars.count && scalars[end] == "\n" { end += 1 }
                var v = String.UnicodeScalarView()
                v.append(contentsOf: scalars[start..<(keepEnds ? end : i)])
                lines.append(String(v))
                start = end
                i = end
            } else {
                i += 1
            }
        }
        if start < scalars.count {
            var v = String.UnicodeScalarView()
            v.append(contentsOf: scalars[start...])
            lines.append(String(v))
        }
        return lines
    }

    /// `str.replace(old, new, count)`.
    static func replace(_ s: String, _ old: String, _ new: String, count: Int = -1) -> String {
        if old.isEmpty {
            // Python inserts `new` before every code point and at the end.
            var out = ""
            var n = 0
            for c in s.unicodeScalars {
                if count < 0 || n < count {
                    out += new
                    n += 1
                }
                out.unicodeScalars.append(c)
            }
            if count < 0 || n < count { out += new }
            return out
        }
        let hay = Array(s.utf8)
        let hits = occurrences(of: Array(old.utf8), in: hay, limit: count < 0 ? Int.max : count)
        if hits.isEmpty { return s }
        var out = [UInt8]()
        out.reserveCapacity(hay.count)
        var start = 0
        for h in hits {
            out.append(contentsOf: hay[start..<h])
            out.append(contentsOf: new.utf8)
            start = h + old.utf8.count
        }
        out.append(contentsOf: hay[start...])
        return String(decoding: out, as: UTF8.self)
    }

    /// `str.find` / `str.rfind` in code points, -1 when absent.
    static func find(_ s: String, _ sub: String, reverse: Bool) -> Int {
        let hay = Array(s.unicodeScalars), needle = Array(sub.unicodeScalars)
        if needle.count > hay.count { return -1 }
        let range = 0...(hay.count - needle.count)
        for i in (reverse ? Array(range.reversed()) : Array(range)) where hay[i..<(i + needle.count)].elementsEqual(needle) {
            return i
        }
        return -1
    }

    /// `str.count(sub)`.
    static func count(_ s: String, _ sub: String) -> Int {
        if sub.isEmpty { return s.unicodeScalars.count + 1 }
        return occurrenceCount(of: Array(sub.utf8), in: Array(s.utf8))
    }

    static func upper(_ s: String) -> String { s.uppercased() }
    static func lower(_ s: String) -> String { s.lowercased() }

    /// `str.title()`: a cased character after an uncased one is title-cased, the rest
    /// lower-cased.
    static func title(_ s: String) -> String {
        var out = ""
        var previousCased = false
        for c in s.unicodeScalars {
            if previousCased {
                out += String(c).lowercased()
            } else {
                out += c.properties.titlecaseMapping
            }
            previousCased = isCased(c)
        }
        return out
    }

    /// `str.capitalize()`: the first character title-cased, the rest lower-cased.
    static func capitalize(_ s: String) -> String {
        var out = ""
        for (i, c) in s.unicodeScalars.enumerated() {
            out += i == 0 ? c.properties.titlecaseMapping : String(c).lowercased()
        }
        return out
    }

    static func swapcase(_ s: String) -> String {
        var out = ""
        for c in s.unicodeScalars {
            if c.properties.isUppercase {
                out += String(c).lowercased()
            } else if c.properties.isLowercase {
                out += String(c).uppercased()
            } else {
                out.unicodeScalars.append(c)
            }
        }
        return out
    }

    /// `str.islower()` / `str.isupper()`: at least one cased character, none of the other case.
    static func isLower(_ s: String) -> Bool {
        var cased = false
        for c in s.unicodeScalars {
            if c.properties.isUppercase || c.properties.generalCategory == .titlecaseLetter { return false }
            if c.properties.isLowercase { cased = true }
        }
        return cased
    }

    static func isUpper(_ s: String) -> Bool {
        var cased = false
        for c in s.unicodeScalars {
            if c.properties.isLowercase || c.properties.generalCategory == .titlecaseLetter { return false }
            if c.properties.isUppercase { cased = true }
        }
        return cased
    }

    /// Padding for center/ljust/rjust: Python puts the odd extra space on the right for
    /// center when the padding is odd and the width odd... exactly: left = pad/2 + (pad & width & 1).
    static func center(_ s: String, _ width: Int, _ fill: Unicode.Scalar) -> String {
        let n = s.unicodeScalars.count
        guard width > n else { return s }
        let pad = width - n
        let left = pad / 2 + (pad & width & 1)
        let f = String(Character(fill))
        return String(repeating: f, count: left) + s + String(repeating: f, count: pad - left)
    }

    // MARK: Slicing

    /// The indices `seq[start:stop:step]` selects from a sequence of `count` elements
    /// (Python's slice.indices); nil when step is 0.
    static func sliceIndices(count: Int, start: Int?, stop: Int?, step: Int?) -> [Int]? {
        let step = step ?? 1
        if step == 0 { return nil }
        func clamp(_ v: Int?, _ dflt: Int, lower: Int, upper: Int) -> Int {
            guard var v else { return dflt }
            if v < 0 { v += count }
            return min(max(v, lower), upper)
        }
        var out: [Int] = []
        if step > 0 {
            let lo = clamp(start, 0, lower: 0, upper: count)
            let hi = clamp(stop, count, lower: 0, upper: count)
            var i = lo
            while i < hi {
                out.append(i)
                let (next, overflow) = i.addingReportingOverflow(step)
                if overflow { break }
                i = next
            }
        } else {
            let lo = clamp(start, count - 1, lower: -1, upper: count - 1)
            let hi = clamp(stop, -1, lower: -1, upper: count - 1)
            var i = lo
            while i > hi {
                out.append(i)
                let (next, overflow) = i.addingReportingOverflow(step)
                if overflow { break }
                i = next
            }
        }
        return out
    }

    /// A String from unicode scalars (through UTF-8 bytes, much faster than appending to a
    /// UnicodeScalarView one by one).
    static func scalarsString<S: Sequence>(_ s: S) -> String where S.Element == Unicode.Scalar {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(s.underestimatedCount)
        for c in s {
            if c.value < 0x80 {
                bytes.append(UInt8(truncatingIfNeeded: c.value))
            } else {
                UTF8.encode(c) { bytes.append($0) }
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
