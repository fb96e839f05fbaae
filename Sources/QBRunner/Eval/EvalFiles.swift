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
        f.dateFormat = "yyyyMMdd-HHmmss.SSS"
        f.timeZone = TimeZone(identifier: "UTC")
        f.locale = Locale(identifier: "en_US_POSIX")
        let model = URL(fileURLWithPath: r.model.path).deletingPathExtension().lastPathComponent
        let safe = String(model.lowercased().unicodeScalars.map { CharacterSet.alphanumerics.contains($0) && $0.isASCII || $0 == "." || $0 == "_" ? Character($0) : "-" })
        return "eval-\(safe)-\(f.string(from: date))"
    }

    public static func svgURL(for json: URL) -> URL {
        json.pathExtension == "json" ? json.deletingPathExtension().appendingPathExtension("svg") : json.appendingPathExtension("svg")
    }

    /// The table, chart and JSON as one change (see `AtomicWriter.writeAll`): all three
    /// are written in full first, then renamed, the JSON last.
    public static func write(_ result: EvalResult, to json: URL) throws {
        try ResultsFile.createFolder(for: json)
        let data = try encode(result)
        try AtomicWriter.writeAll([
            (Data(result.markdown.utf8), ResultsFile.markdownURL(for: json)),
            (Data(SpeedQualityChart.svg(result).utf8), svgURL(for: json)),
            (data, json),
        ])
    }
}
