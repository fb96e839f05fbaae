import Foundation
import QBSupport

/// Writing `eval` results: the JSON, its Markdown table and the SVG chart, each atomically.
public enum EvalFiles {
    public static func encode(_ result: EvalResult) throws -> Data {
        var data = try ResultsFile.encoder().encode(result)
        data.append(UInt8(ascii: "\n"))
        return data
    }

    /// `eval-<model file name>-<UTC time>`.
    public static func defaultStem(_ r: EvalResult, date: Date = Date()) -> String {
        let f = DateFormatter()
        f.dateFormat = "yyyyMMdd-HHmmss"
        f.timeZone = TimeZone(identifier: "UTC")
        f.locale = Locale(identifier: "en_US_POSIX")
        let model = URL(fileURLWithPath: r.model.path).deletingPathExtension().lastPathComponent
        let safe = String(model.lowercased().unicodeScalars.map { CharacterSet.alphanumerics.contains($0) && $0.isASCII || $0 == "." || $0 == "_" ? Character($0) : "-" })
        return "eval-\(safe)-\(f.string(from: date))"
    }

    public static func svgURL(for json: URL) -> URL {
        json.pathExtension == "json" ? json.deletingPathExtension().appendingPathExtension("svg") : json.appendingPathExtension("svg")
    }

    /// The table and chart first, the JSON last.
    public static func write(_ result: EvalResult, to json: URL) throws {
        try FileManager.default.createDirectory(at: json.deletingLastPathComponent(), withIntermediateDirectories: true)
        let data = try encode(result)
        try AtomicWriter.write(Data(result.markdown.utf8), to: ResultsFile.markdownURL(for: json))
        try AtomicWriter.write(Data(SpeedQualityChart.svg(result).utf8), to: svgURL(for: json))
        try AtomicWriter.write(data, to: json)
    }
}
