import Foundation

/// Typed access to a parsed JSON tree (see `JSONParser`), turning every shape mismatch
/// into a `TokenizerError.malformed` that names the file and the dotted field path.
struct JSONFields {
    let path: String

    func parse(_ data: Data) throws -> JSONObject {
        let root: Any
        do {
            root = try JSONParser.parse(data)
        } catch {
            throw TokenizerError.malformed(path: path, field: "(file)", reason: "not valid JSON: \(error.reason) at byte \(error.offset)")
        }
        guard let object = root as? JSONObject else {
            throw TokenizerError.malformed(path: path, field: "(file)", reason: "top level is not a JSON object")
        }
        return object
    }

    /// `value` unless it is absent or JSON null.
    func present(_ value: Any?) -> Any? {
        guard let value, !(value is NSNull) else { return nil }
        return value
    }

    func object(_ value: Any?, _ field: @autoclosure () -> String) throws -> JSONObject {
        guard let v = present(value) else { throw missing(field()) }
        guard let o = v as? JSONObject else { throw wrongType(field(), "an object") }
        return o
    }

    func optionalObject(_ value: Any?, _ field: @autoclosure () -> String) throws -> JSONObject? {
        guard let v = present(value) else { return nil }
        guard let o = v as? JSONObject else { throw wrongType(field(), "an object") }
        return o
    }

    func array(_ value: Any?, _ field: @autoclosure () -> String) throws -> [Any] {
        guard let v = present(value) else { throw missing(field()) }
        guard let a = v as? [Any] else { throw wrongType(field(), "an array") }
        return a
    }

    func string(_ value: Any?, _ field: @autoclosure () -> String) throws -> String {
        guard let v = present(value) else { throw missing(field()) }
        guard let s = v as? String else { throw wrongType(field(), "a string") }
        return s
    }

    func optionalString(_ value: Any?, _ field: @autoclosure () -> String) throws -> String? {
        guard let v = present(value) else { return nil }
        guard let s = v as? String else { throw wrongType(field(), "a string") }
        return s
    }

    func optionalBool(_ value: Any?, _ field: @autoclosure () -> String) throws -> Bool? {
        guard let v = present(value) else { return nil }
        guard let b = v as? Bool else { throw wrongType(field(), "a boolean") }
        return b
    }

    func bool(_ value: Any?, _ field: @autoclosure () -> String, default fallback: Bool) throws -> Bool {
        try optionalBool(value, field()) ?? fallback
    }

    /// A non-negative integer no larger than `limit`.
    func integer(_ value: Any?, _ field: @autoclosure () -> String, limit: Int) throws -> Int {
        guard let v = present(value) else { throw missing(field()) }
        if let n = v as? Int {
            guard n >= 0, n <= limit else {
                throw TokenizerError.malformed(path: path, field: field(), reason: "\(n) is not an integer in 0...\(limit)")
            }
            return n
        }
        guard let d = v as? Double else { throw wrongType(field(), "an integer") }
        guard d.rounded() == d, d >= 0, d <= Double(limit) else {
            throw TokenizerError.malformed(path: path, field: field(), reason: "\(d) is not an integer in 0...\(limit)")
        }
        return Int(d)
    }

    func optionalDouble(_ value: Any?, _ field: @autoclosure () -> String) throws -> Double? {
        guard let v = present(value) else { return nil }
        if let n = v as? Int { return Double(n) }
        guard let d = v as? Double else { throw wrongType(field(), "a number") }
        return d
    }

    func missing(_ field: String) -> TokenizerError {
        .malformed(path: path, field: field, reason: "missing")
    }

    func wrongType(_ field: String, _ expected: String) -> TokenizerError {
        .malformed(path: path, field: field, reason: "expected \(expected)")
    }
}

/// Writes JSON text directly, so that generated files are byte-for-byte deterministic
/// (key order as written, no platform-dependent number or escape formatting).
struct JSONWriter {
    private(set) var text = ""

    static func quoted(_ s: String) -> String {
        var out = "\""
        out.reserveCapacity(s.utf8.count + 2)
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    let hex = String(scalar.value, radix: 16, uppercase: false)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
        return out
    }

    mutating func raw(_ s: String) { text += s }
}
