import Foundation
import QBSupport
import Yams

/// Reading and writing `bench` results: JSON per the versioned schema, with a Markdown
/// summary beside it, both written atomically; a malformed file is reported with its
/// path and the line of the problem.
public enum ResultsFile {
    public static func encoder() -> JSONEncoder {
        let e = JSONEncoder()
        e.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        e.dateEncodingStrategy = .iso8601
        // A safety net only: every figure written is finite.
        e.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return e
    }

    public static func decoder() -> JSONDecoder {
        let d = JSONDecoder()
        d.dateDecodingStrategy = .iso8601
        d.nonConformingFloatDecodingStrategy = .convertFromString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return d
    }

    public static func encode(_ result: BenchResult) throws -> Data {
        var data = try encoder().encode(result)
        data.append(UInt8(ascii: "\n"))
        return data
    }

    public static func load(path: String) throws -> BenchResult {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw LocatedError(path: path, "cannot read the results file")
        }
        return try decode(data, path: path)
    }

    /// A results file's bytes and the `schema` it declares (nil when it declares none):
    /// what `compare` reads first to know which kind of result it holds. Deep nesting is
    /// refused before any recursive parse.
    public static func declaredSchema(path: String) throws -> (data: Data, schema: String?) {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw LocatedError(path: path, "cannot read the results file")
        }
        do {
            try NestingDepth.checkJSON(data)
        } catch {
            throw LocatedError(path: path, line: error.line, "not valid JSON: nesting deeper than \(error.limit) levels")
        }
        struct Header: Decodable { let schema: String? }
        do {
            return (data, try decoder().decode(Header.self, from: data).schema)
        } catch {
            throw locate(error, data: data, path: path)
        }
    }

    /// Decodes a results file, checking the schema name and version first.
    public static func decode(_ data: Data, path: String) throws -> BenchResult {
        // JSONDecoder (and the YAML parser that locates errors) recurse once per level.
        do {
            try NestingDepth.checkJSON(data)
        } catch {
            throw LocatedError(path: path, line: error.line, "not valid JSON: nesting deeper than \(error.limit) levels")
        }
        struct Header: Decodable {
            let schema: String?
            let schemaVersion: Int?
            enum CodingKeys: String, CodingKey { case schema, schemaVersion = "schema_version" }
        }
        let header: Header
        do {
            header = try decoder().decode(Header.self, from: data)
        } catch {
            throw locate(error, data: data, path: path)
        }
        guard header.schema == BenchResult.schemaName else {
            throw located(["schema"], data: data, path: path, "not a quantbench bench result (schema is \(header.schema.map { "'\($0)'" } ?? "missing"), expected '\(BenchResult.schemaName)')")
        }
        guard header.schemaVersion == BenchResult.currentSchemaVersion else {
            throw located(
                ["schema_version"], data: data, path: path,
                "schema_version \(header.schemaVersion.map(String.init) ?? "missing") is not one this build reads (\(BenchResult.currentSchemaVersion))")
        }
        do {
            return try decoder().decode(BenchResult.self, from: data)
        } catch {
            throw locate(error, data: data, path: path)
        }
    }

    /// A decoding error as a `LocatedError`: syntax errors at the parser's position, schema
    /// errors at the line of the value (or of the object missing a key).
    static func locate(_ error: any Error, data: Data, path: String) -> LocatedError {
        guard let e = error as? DecodingError else { return LocatedError(path: path, "\(error)") }
        func describe(_ codingPath: [any CodingKey]) -> String {
            codingPath.reduce("") { s, k in k.intValue.map { "\(s)[\($0)]" } ?? (s.isEmpty ? k.stringValue : "\(s).\(k.stringValue)") }
        }
        switch e {
        case .dataCorrupted(let ctx) where ctx.codingPath.isEmpty:
            return syntaxError(data: data, path: path, underlying: ctx.underlyingError)
        case .dataCorrupted(let ctx):
            return located(ctx.codingPath.map(\.stringValue), data: data, path: path, "\(describe(ctx.codingPath)): \(ctx.debugDescription)")
        case .keyNotFound(let key, let ctx):
            let container = describe(ctx.codingPath)
            return located(
                ctx.codingPath.map(\.stringValue), data: data, path: path,
                "missing field '\(key.stringValue)'" + (container.isEmpty ? "" : " in \(container)"))
        case .typeMismatch(let type, let ctx):
            return located(ctx.codingPath.map(\.stringValue), data: data, path: path, "\(describe(ctx.codingPath)): expected \(type)")
        case .valueNotFound(let type, let ctx):
            return located(ctx.codingPath.map(\.stringValue), data: data, path: path, "\(describe(ctx.codingPath)): expected \(type), found null")
        @unknown default:
            return LocatedError(path: path, "\(e)")
        }
    }

    /// The error at the deepest node of `keys` that exists (array indices as decimal
    /// strings), found by re-reading the JSON with a parser that keeps positions.
    static func located(_ keys: [String], data: Data, path: String, _ message: String) -> LocatedError {
        guard let text = String(data: data, encoding: .utf8), let root = try? Yams.compose(yaml: text) else {
            return LocatedError(path: path, message)
        }
        var node = root
        for key in keys {
            var next: Node?
            switch node {
            case .mapping(let m): next = m[key]
            case .sequence(let s): next = Int(key).flatMap { $0 >= 0 && $0 < s.count ? s[$0] : nil }
            case .scalar: next = nil
            }
            guard let n = next else { break }
            node = n
        }
        return LocatedError(path: path, line: node.mark?.line, column: node.mark?.column, message)
    }

    static func syntaxError(data: Data, path: String, underlying: (any Error)?) -> LocatedError {
        guard let text = String(data: data, encoding: .utf8) else {
            return LocatedError(path: path, "not UTF-8 text")
        }
        if text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            return LocatedError(path: path, line: 1, "the file is empty")
        }
        // The JSON parser's message names the line on some platforms; the YAML parser
        // (JSON is YAML) always gives a position.
        let detail = underlying.map { "\($0)" } ?? "not valid JSON"
        if let range = detail.range(of: #"line (\d+)"#, options: .regularExpression),
           let line = Int(detail[range].dropFirst(5)) {
            return LocatedError(path: path, line: line, "not valid JSON: \(detail)")
        }
        do {
            _ = try YAMLObject.parse(text, path: path)
        } catch let e as LocatedError {
            return LocatedError(path: path, line: e.line, column: e.column, "not valid JSON")
        } catch {}
        return LocatedError(path: path, "not valid JSON: \(detail)")
    }

    /// `results/<suite>-<model>-<quant>-<UTC timestamp to the millisecond>` (no extension;
    /// `uniqueURL` adds a run id), each part
    /// reduced to file-name-safe characters.
    public static func defaultStem(for r: BenchResult, date: Date = Date()) -> String {
        let f = DateFormatter()
        f.dateFormat = "yyyyMMdd-HHmmss.SSS"
        f.timeZone = TimeZone(identifier: "UTC")
        f.locale = Locale(identifier: "en_US_POSIX")
        let model = URL(fileURLWithPath: r.model.path).deletingPathExtension().lastPathComponent
        let quant = r.model.quantization ?? (r.model.tensorFormats.max { $0.value < $1.value }?.key ?? "native")
        func safe(_ s: String) -> String {
            String(s.lowercased().unicodeScalars.map { CharacterSet.alphanumerics.contains($0) && $0.isASCII || $0 == "." || $0 == "_" ? Character($0) : "-" })
        }
        return [r.suite.name, model, quant, f.string(from: date)].map(safe).joined(separator: "-")
    }

    /// Where the Markdown summary of a JSON file at `json` goes: same name, `.md`.
    public static func markdownURL(for json: URL) -> URL {
        json.pathExtension == "json" ? json.deletingPathExtension().appendingPathExtension("md") : json.appendingPathExtension("md")
    }

    /// Writes the JSON and its Markdown summary as one change: both are written in full
    /// under temporary names, then renamed (the JSON last, so a JSON file present always
    /// has its summary beside it); a full disk leaves the previous state, never a
    /// mismatched pair. Creates the folder if needed.
    public static func write(_ result: BenchResult, markdown: String, to json: URL, commitIf: () -> Bool = { true }) throws {
        try createFolder(for: json)
        let data = try encode(result)
        try AtomicWriter.writeAll([(Data(markdown.utf8), markdownURL(for: json)), (data, json)], commitIf: commitIf)
    }

    /// Creates the folder `file` goes into, with a one-line error naming it.
    public static func createFolder(for file: URL) throws {
        let dir = file.deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        } catch {
            throw LocatedError(path: dir.path, "cannot create the folder (\(FoundationErrorText.reason(error)))")
        }
    }

    /// A results path nothing else has: `stem` plus a short random run id, checked against
    /// the files already there (runs started in the same millisecond still differ).
    public static func uniqueURL(folder: URL, stem: String, extensions: [String] = ["json", "md"]) -> URL {
        while true {
            let id = String(UInt32.random(in: 0...UInt32.max) & 0xFFFFFF, radix: 16)
            let name = stem + "-" + String(repeating: "0", count: 6 - id.count) + id
            let taken = extensions.contains { FileManager.default.fileExists(atPath: folder.appendingPathComponent(name + "." + $0).path) }
            if !taken { return folder.appendingPathComponent(name + ".json") }
        }
    }
}
