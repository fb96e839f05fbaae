import Foundation
import QBSupport

/// Typed access to a parsed JSON tree (see `JSONReader`), turning every shape mismatch
/// into a `TokenizerError.malformed` that names the file and the dotted field path.
struct JSONFields {
    let path: String

    /// Nesting deeper than this is a hostile file, not a tokenizer.
    static let maximumDepth = 256

    func parse(_ data: Data) throws -> JSONObject {
        let root: JSONValue
        do {
            root = try JSONReader.parse(data, maximumDepth: Self.maximumDepth)
        } catch {
            throw TokenizerError.malformed(path: path, field: "(file)", reason: "not valid JSON: \(error.reason) at byte \(error.offset)")
        }
        guard case .object(let object) = root else {
            throw TokenizerError.malformed(path: path, field: "(file)", reason: "top level is not a JSON object")
        }
        return object
    }

    /// `value` unless it is absent or JSON null.
    func present(_ value: JSONValue?) -> JSONValue? {
        guard let value, !value.isNull else { return nil }
        return value
    }

    func object(_ value: JSONValue?, _ field: @autoclosure () -> String) throws -> JSONObject {
        guard let v = present(value) else { throw missing(field()) }
        guard let o = v.objectValue else { throw wrongType(field(), "an object") }
        return o
    }

    func optionalObject(_ value: JSONValue?, _ field: @autoclosure () -> String) throws -> JSONObject? {
        guard let v = present(value) else { return nil }
        guard let o = v.objectValue else { throw wrongType(field(), "an object") }
        return o
    }

    func array(_ value: JSONValue?, _ field: @autoclosure () -> String) throws -> [JSONValue] {
        guard let v = present(value) else { throw missing(field()) }
        guard let a = v.arrayValue else { throw wrongType(field(), "an array") }
        return a
    }

    func string(_ value: JSONValue?, _ field: @autoclosure () -> String) throws -> String {
        guard let v = present(value) else { throw missing(field()) }
        guard let s = v.stringValue else { throw wrongType(field(), "a string") }
        return s
    }

    func optionalString(_ value: JSONValue?, _ field: @autoclosure () -> String) throws -> String? {
        guard let v = present(value) else { return nil }
        guard let s = v.stringValue else { throw wrongType(field(), "a string") }
        return s
    }

    func optionalBool(_ value: JSONValue?, _ field: @autoclosure () -> String) throws -> Bool? {
        guard let v = present(value) else { return nil }
        guard let b = v.boolValue else { throw wrongType(field(), "a boolean") }
        return b
    }

    func bool(_ value: JSONValue?, _ field: @autoclosure () -> String, default fallback: Bool) throws -> Bool {
        try optionalBool(value, field()) ?? fallback
    }

    /// A non-negative integer no larger than `limit`.
    func integer(_ value: JSONValue?, _ field: @autoclosure () -> String, limit: Int) throws -> Int {
        guard let v = present(value) else { throw missing(field()) }
        if let n = v.intValue {
            guard n >= 0, n <= limit else {
                throw TokenizerError.malformed(path: path, field: field(), reason: "\(n) is not an integer in 0...\(limit)")
            }
            return n
        }
        guard let d = v.doubleValue else { throw wrongType(field(), "an integer") }
        guard d.rounded() == d, d >= 0, d <= Double(limit) else {
            throw TokenizerError.malformed(path: path, field: field(), reason: "\(d) is not an integer in 0...\(limit)")
        }
        return Int(d)
    }

    func optionalDouble(_ value: JSONValue?, _ field: @autoclosure () -> String) throws -> Double? {
        guard let v = present(value) else { return nil }
        if let n = v.intValue { return Double(n) }
        guard let d = v.doubleValue else { throw wrongType(field(), "a number") }
        return d
    }

    func missing(_ field: String) -> TokenizerError {
        .malformed(path: path, field: field, reason: "missing")
    }

    func wrongType(_ field: String, _ expected: String) -> TokenizerError {
        .malformed(path: path, field: field, reason: "expected \(expected)")
    }
}
