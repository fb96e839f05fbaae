import Foundation

/// One token of a template. Text outside tags is `data`; inside `{{ }}` and `{% %}` come
/// names, literals and operators.
struct JinjaToken: Sendable {
    enum Kind: Sendable, Equatable {
        case data(String)
        case variableBegin, variableEnd, blockBegin, blockEnd
        case name(String)
        case string(String)
        case integer(Int)
        case float(Double)
        case op(String)
        case eof
    }

    let kind: Kind
    let line: Int
}

/// Whitespace handling, as jinja2's Environment options of the same names.
public struct JinjaWhitespace: Sendable, Equatable {
    /// Drop the first newline after a block tag (`%}`) or comment (`#}`).
    public var trimBlocks: Bool
    /// Drop spaces and tabs before a block tag or comment that starts a line.
    public var lstripBlocks: Bool
    /// Keep a single trailing newline of the template (jinja2 drops it by default).
    public var keepTrailingNewline: Bool

    /// Custom whitespace handling (chat templates want `chatTemplates`).
    public init(trimBlocks: Bool, lstripBlocks: Bool, keepTrailingNewline: Bool = false) {
        self.trimBlocks = trimBlocks
        self.lstripBlocks = lstripBlocks
        self.keepTrailingNewline = keepTrailingNewline
    }

    /// What Hugging Face transformers (and llama.cpp) use for chat templates.
    public static let chatTemplates = JinjaWhitespace(trimBlocks: true, lstripBlocks: true)
    /// jinja2's defaults.
    public static let jinjaDefaults = JinjaWhitespace(trimBlocks: false, lstripBlocks: false)
}

/// Splits template text into tokens the way jinja2's lexer does, including its whitespace
/// rules: `{%-`/`-%}` strip all whitespace on that side, `+` keeps it, `trimBlocks` eats
/// the newline after a block tag and `lstripBlocks` the indentation before one. Getting
/// these exactly right is what makes rendered prompts byte-identical to transformers'.
struct JinjaLexer {
    let name: String
    let options: JinjaWhitespace
    private var src: [Unicode.Scalar] = []
    private var tokens: [JinjaToken] = []
    private var line = 1

    static let operators: [String] = [
        "//", "**", "==", "!=", ">=", "<=",
        "+", "-", "/", "*", "%", "~", "[", "]", "(", ")", "{", "}", ">", "<", "=", ".", ":", "|", ",", ";",
    ]

    init(name: String, options: JinjaWhitespace) {
        self.name = name
        self.options = options
    }

    func fail(_ message: String, line: Int) -> ChatTemplateError {
        .syntax(template: name, line: line, message: message)
    }

    /// jinja2 normalizes \r\n and \r to \n and drops one trailing newline.
    static func normalize(_ source: String, keepTrailingNewline: Bool) -> [Unicode.Scalar] {
        var out: [Unicode.Scalar] = []
        out.reserveCapacity(source.unicodeScalars.count)
        var previousCR = false
        for c in source.unicodeScalars {
            if c == "\r" {
                out.append("\n")
                previousCR = true
                continue
            }
            if c == "\n" && previousCR {
                previousCR = false
                continue
            }
            previousCR = false
            out.append(c)
        }
        if !keepTrailingNewline && out.last == "\n" { out.removeLast() }
        return out
    }

    mutating func tokenize(_ source: String) throws -> [JinjaToken] {
        src = Self.normalize(source, keepTrailingNewline: options.keepTrailingNewline)
        tokens = []
        line = 1
        var pos = 0
        // Whether the last thing consumed ended a line (jinja2's `line_starting`): a block
        // tag at the very start of the text that follows may then be lstripped.
        var lineStarting = true
        let n = src.count

        while pos < n {
            guard let start = nextTagStart(from: pos) else {
                emitData(pos, n)
                break
            }
            let opener = src[start + 1]
            var afterOpener = start + 2
            var sign: Unicode.Scalar?
            if afterOpener < n && (src[afterOpener] == "-" || src[afterOpener] == "+") {
                sign = src[afterOpener]
                afterOpener += 1
            }
            let rawEnd = opener == "%" ? matchRawBegin(from: afterOpener) : nil

            // The text before the tag, with the tag's whitespace control applied.
            var textEnd = start
            if sign == "-" {
                while textEnd > pos && PyText.isSpace(src[textEnd - 1]) { textEnd -= 1 }
            } else if sign != "+" && options.lstripBlocks && opener != "{" {
                var lineStart = textEnd
                while lineStart > pos && src[lineStart - 1] != "\n" { lineStart -= 1 }
                if lineStart > pos || lineStarting {
                    if lineStart < textEnd && src[lineStart..<textEnd].allSatisfy(PyText.isSpace) {
                        textEnd = lineStart
                    }
                }
            }
            emitData(pos, textEnd)
            countLines(textEnd, start)
            let tagLine = line

            if let rawEnd {
                // {% raw %}...{% endraw %}: the body is data, tags inside are not parsed.
                let afterBegin = rawEnd
                countLines(start, afterBegin)
                let lineStartingAfterBegin = afterBegin > 0 && src[afterBegin - 1] == "\n"
                guard let (bodyStart, endTagStart, endSign, endEnd) = findEndRaw(from: afterBegin) else {
                    throw fail("missing end of raw directive ({% endraw %}) for the raw block opened here", line: tagLine)
                }
                var bodyEnd = endTagStart
                if endSign == "-" {
                    while bodyEnd > bodyStart && PyText.isSpace(src[bodyEnd - 1]) { bodyEnd -= 1 }
                } else if endSign != "+" && options.lstripBlocks {
                    var lineStart = bodyEnd
                    while lineStart > bodyStart && src[lineStart - 1] != "\n" { lineStart -= 1 }
                    if lineStart > bodyStart || lineStartingAfterBegin {
                        if lineStart < bodyEnd && src[lineStart..<bodyEnd].allSatisfy(PyText.isSpace) {
                            bodyEnd = lineStart
                        }
                    }
                }
                emitData(bodyStart, bodyEnd)
                countLines(bodyEnd, endEnd)
                pos = endEnd
                lineStarting = src[endEnd - 1] == "\n"
                continue
            }

            switch opener {
            case "#":
                guard let end = findCommentEnd(from: afterOpener) else {
                    throw fail("missing end of comment tag ('#}') for the comment opened here", line: tagLine)
                }
                countLines(start, end)
                pos = end
                lineStarting = src[end - 1] == "\n"
            case "%":
                tokens.append(JinjaToken(kind: .blockBegin, line: tagLine))
                countLines(start, afterOpener)
                pos = try lexTag(from: afterOpener, block: true, openedOn: tagLine)
                lineStarting = src[pos - 1] == "\n"
            default:
                tokens.append(JinjaToken(kind: .variableBegin, line: tagLine))
                countLines(start, afterOpener)
                pos = try lexTag(from: afterOpener, block: false, openedOn: tagLine)
                lineStarting = src[pos - 1] == "\n"
            }
        }
        tokens.append(JinjaToken(kind: .eof, line: line))
        return tokens
    }

    private mutating func emitData(_ from: Int, _ to: Int) {
        guard from < to else { return }
        tokens.append(JinjaToken(kind: .data(PyText.scalarsString(src[from..<to])), line: line))
        countLines(from, to)
    }

    private mutating func countLines(_ from: Int, _ to: Int) {
        guard from < to else { return }
        for i in from..<to where src[i] == "\n" { line += 1 }
    }

    private func nextTagStart(from pos: Int) -> Int? {
        var i = pos
        let n = src.count
        while i + 1 < n {
            if src[i] == "{" {
                let c = src[i + 1]
                if c == "{" || c == "%" || c == "#" { return i }
            }
            i += 1
        }
        return nil
    }

    private func matches(_ text: String, at i: Int) -> Bool {
        var k = i
        for c in text.unicodeScalars {
            guard k < src.count, src[k] == c else { return false }
            k += 1
        }
        return true
    }

    private func skipSpace(_ i: Int) -> Int {
        var k = i
        while k < src.count && PyText.isSpace(src[k]) { k += 1 }
        return k
    }

    /// `\s*raw\s*(?:-%}\s*|%})` after `{%` and its sign: the end of the tag, or nil.
    private func matchRawBegin(from i: Int) -> Int? {
        var k = skipSpace(i)
        guard matches("raw", at: k) else { return nil }
        k = skipSpace(k + 3)
        if matches("-%}", at: k) { return skipSpace(k + 3) }
        if matches("%}", at: k) { return k + 2 }
        return nil
    }

    /// The first `{% endraw %}` (any sign): body start, tag start, sign, end of the tag.
    private func findEndRaw(from i: Int) -> (Int, Int, Unicode.Scalar?, Int)? {
        var k = i
        while let t = nextTagStart(from: k) {
            defer { k = t + 1 }
            guard src[t + 1] == "%" else { continue }
            var j = t + 2
            var sign: Unicode.Scalar?
            if j < src.count && (src[j] == "-" || src[j] == "+") {
                sign = src[j]
                j += 1
            }
            j = skipSpace(j)
            guard matches("endraw", at: j) else { continue }
            j = skipSpace(j + 6)
            if matches("+%}", at: j) { return (i, t, sign, j + 3) }
            if matches("-%}", at: j) { return (i, t, sign, skipSpace(j + 3)) }
            if matches("%}", at: j) {
                var e = j + 2
                if options.trimBlocks && e < src.count && src[e] == "\n" { e += 1 }
                return (i, t, sign, e)
            }
        }
        return nil
    }

    /// The end of a comment (`+#}`, `-#}` and following whitespace, or `#}` and with
    /// trimBlocks one newline).
    private func findCommentEnd(from i: Int) -> Int? {
        var k = i
        let n = src.count
        while k < n {
            if src[k] == "+" && matches("#}", at: k + 1) { return k + 3 }
            if src[k] == "-" && matches("#}", at: k + 1) { return skipSpace(k + 3) }
            if src[k] == "#" && k + 1 < n && src[k + 1] == "}" {
                var e = k + 2
                if options.trimBlocks && e < n && src[e] == "\n" { e += 1 }
                return e
            }
            k += 1
        }
        return nil
    }

    /// Lexes the inside of `{% %}` or `{{ }}` from `i`; returns the position after the end
    /// delimiter (and the whitespace it removes).
    private mutating func lexTag(from i: Int, block: Bool, openedOn: Int) throws -> Int {
        var k = i
        let n = src.count
        var balance: [Unicode.Scalar] = []
        let closer = block ? "%}" : "}}"
        while true {
            guard k < n else {
                throw fail(
                    "unclosed tag: '\(block ? "{%" : "{{")' opened on line \(openedOn) has no '\(closer)'",
                    line: openedOn)
            }
            // End delimiter, only when brackets are balanced (`{{ {'a': 1}}}` closes the dict first).
            if balance.isEmpty {
                if block && src[k] == "+" && matches("%}", at: k + 1) {
                    tokens.append(JinjaToken(kind: .blockEnd, line: line))
                    return k + 3
                }
                if src[k] == "-" && matches(closer, at: k + 1) {
                    tokens.append(JinjaToken(kind: block ? .blockEnd : .variableEnd, line: line))
                    let e = skipSpace(k + 3)
                    countLines(k, e)
                    return e
                }
                if matches(closer, at: k) {
                    tokens.append(JinjaToken(kind: block ? .blockEnd : .variableEnd, line: line))
                    var e = k + 2
                    if block && options.trimBlocks && e < n && src[e] == "\n" {
                        e += 1
                        line += 1
                    }
                    return e
                }
            }
            let c = src[k]
            if PyText.isSpace(c) {
                let e = skipSpace(k)
                countLines(k, e)
                k = e
                continue
            }
            if let (token, e) = try number(at: k) {
                tokens.append(JinjaToken(kind: token, line: line))
                k = e
                continue
            }
            if isWordChar(c) {
                var e = k
                while e < n && isWordChar(src[e]) { e += 1 }
                tokens.append(JinjaToken(kind: .name(PyText.scalarsString(src[k..<e])), line: line))
                k = e
                continue
            }
            if c == "'" || c == "\"" {
                let startLine = line
                var e = k + 1
                while e < n && src[e] != c {
                    if src[e] == "\\" { e += 1 }
                    e += 1
                }
                guard e < n else { throw fail("unterminated string literal", line: startLine) }
                let value = try unescape(src[(k + 1)..<e], line: startLine)
                tokens.append(JinjaToken(kind: .string(value), line: startLine))
                countLines(k, e + 1)
                k = e + 1
                continue
            }
            guard let op = Self.operators.first(where: { matches($0, at: k) }) else {
                throw fail("unexpected character '\(Character(c))' in a tag", line: line)
            }
            switch op {
            case "{": balance.append("}")
            case "(": balance.append(")")
            case "[": balance.append("]")
            case "}", ")", "]":
                guard let expected = balance.popLast() else { throw fail("unexpected '\(op)'", line: line) }
                if String(Character(expected)) != op {
                    throw fail("unexpected '\(op)', expected '\(Character(expected))'", line: line)
                }
            default: break
            }
            tokens.append(JinjaToken(kind: .op(op), line: line))
            k += op.unicodeScalars.count
        }
    }

    private func isWordChar(_ c: Unicode.Scalar) -> Bool {
        if c == "_" { return true }
        if c.isASCII { return (c >= "a" && c <= "z") || (c >= "A" && c <= "Z") || (c >= "0" && c <= "9") }
        return c.properties.isAlphabetic || c.properties.numericType != nil
    }

    private func isDigit(_ i: Int) -> Bool { i < src.count && src[i] >= "0" && src[i] <= "9" }

    /// jinja2's float and integer rules (floats first; `_` separators allowed).
    private func number(at k: Int) throws -> (JinjaToken.Kind, Int)? {
        guard isDigit(k) else { return nil }
        // (\d+_)*\d+ : digits with single underscores between groups.
        func digitRun(_ i: Int) -> Int? {
            guard isDigit(i) else { return nil }
            var e = i
            while true {
                while isDigit(e) { e += 1 }
                if e < src.count && src[e] == "_" && isDigit(e + 1) {
                    e += 1
                } else {
                    return e
                }
            }
        }
        // Float: not right after a '.', so `x.0.1` reads as subscripts.
        if k == 0 || src[k - 1] != "." {
            if let intEnd = digitRun(k) {
                var e = intEnd
                var isFloat = false
                if e < src.count && src[e] == ".", let f = digitRun(e + 1) {
                    e = f
                    isFloat = true
                }
                if e < src.count && (src[e] == "e" || src[e] == "E") {
                    var x = e + 1
                    if x < src.count && (src[x] == "+" || src[x] == "-") { x += 1 }
                    if let xe = digitRun(x) {
                        e = xe
                        isFloat = true
                    }
                }
                if isFloat {
                    let text = PyText.scalarsString(src[k..<e]).replacingOccurrences(of: "_", with: "")
                    guard let d = Double(text) else { throw fail("invalid number \(text)", line: line) }
                    return (.float(d), e)
                }
            }
        }
        // Integers: 0b/0o/0x prefixes, decimal, or zeros.
        if src[k] == "0", k + 1 < src.count {
            let p = src[k + 1]
            let radix: Int? = (p == "b" || p == "B") ? 2 : (p == "o" || p == "O") ? 8 : (p == "x" || p == "X") ? 16 : nil
            if let radix {
                var e = k + 2
                var digits = ""
                while e < src.count {
                    var c = src[e]
                    if c == "_" && e + 1 < src.count {
                        e += 1
                        c = src[e]
                    }
                    guard let v = Character(c).hexDigitValue, v < radix else {
                        if src[e - 1] == "_" { e -= 1 }
                        break
                    }
                    digits.unicodeScalars.append(c)
                    e += 1
                }
                if !digits.isEmpty {
                    guard let v = Int(digits, radix: radix) else { throw fail("integer literal too large", line: line) }
                    return (.integer(v), e)
                }
            }
            // `0(_?0)*`
            var e = k + 1
            while e < src.count {
                if src[e] == "0" {
                    e += 1
                } else if src[e] == "_" && e + 1 < src.count && src[e + 1] == "0" {
                    e += 2
                } else {
                    break
                }
            }
            return (.integer(0), e)
        }
        guard let e = digitRun(k) else { return nil }
        let text = PyText.scalarsString(src[k..<e]).replacingOccurrences(of: "_", with: "")
        guard let v = Int(text) else { throw fail("integer literal \(text) is too large", line: line) }
        return (.integer(v), e)
    }

    /// Python's unicode-escape decoding, which jinja2 applies to string literals.
    private func unescape(_ body: ArraySlice<Unicode.Scalar>, line: Int) throws -> String {
        guard body.contains("\\") else { return PyText.scalarsString(body) }
        var out: [Unicode.Scalar] = []
        out.reserveCapacity(body.count)
        var i = body.startIndex
        func hexValue(_ count: Int, _ what: String) throws -> UInt32 {
            var v: UInt32 = 0
            for k in 0..<count {
                guard i + 1 + k < body.endIndex, let d = Character(body[i + 1 + k]).hexDigitValue else {
                    throw fail("truncated \\\(what) escape in a string literal", line: line)
                }
                v = v * 16 + UInt32(d)
            }
            i += count
            return v
        }
        while i < body.endIndex {
            let c = body[i]
            guard c == "\\", i + 1 < body.endIndex else {
                out.append(c)
                i += 1
                continue
            }
            i += 1
            let e = body[i]
            switch e {
            case "\n": break
            case "\\": out.append("\\")
            case "'": out.append("'")
            case "\"": out.append("\"")
            case "a": out.append("\u{07}")
            case "b": out.append("\u{08}")
            case "f": out.append("\u{0C}")
            case "n": out.append("\n")
            case "r": out.append("\r")
            case "t": out.append("\t")
            case "v": out.append("\u{0B}")
            case "0"..."7":
                var v: UInt32 = 0
                var k = 0
                while k < 3 && i < body.endIndex && body[i] >= "0" && body[i] <= "7" {
                    v = v * 8 + (body[i].value - 48)
                    i += 1
                    k += 1
                }
                i -= 1
                out.append(Unicode.Scalar(v) ?? "\u{FFFD}")
            case "x":
                let v = try hexValue(2, "xXX")
                out.append(Unicode.Scalar(v) ?? "\u{FFFD}")
            case "u":
                let v = try hexValue(4, "uXXXX")
                out.append(Unicode.Scalar(v) ?? "\u{FFFD}")
            case "U":
                let v = try hexValue(8, "UXXXXXXXX")
                guard let s = Unicode.Scalar(v) else { throw fail("illegal Unicode character in a string literal", line: line) }
                out.append(s)
            case "N":
                throw fail("\\N{...} escapes in string literals are not supported", line: line)
            default:
                // Python keeps unknown escapes as they are.
                out.append("\\")
                out.append(e)
            }
            i += 1
        }
        return PyText.scalarsString(out)
    }
}
