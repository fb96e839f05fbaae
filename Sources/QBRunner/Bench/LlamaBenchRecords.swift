import Foundation
import QBSupport

/// `bench -o md|csv|json|jsonl|sql`: every throughput test of a sweep as one llama-bench
/// record, with llama-bench's field names, order and types (tools/llama-bench), so what
/// reads llama-bench's output (`scripts/compare-llama-bench.py`, a spreadsheet, `sqlite3`)
/// reads ours. Fields that only mean something on a GPU get llama-bench's CPU values.
public struct LlamaBenchRecord: Sendable, Equatable {
    public enum FieldType: Sendable { case text, integer, real }

    /// llama-bench's fields in its order, with the type its SQL and JSON printers give them.
    public static let fields: [(name: String, type: FieldType)] = [
        ("build_commit", .text), ("build_number", .integer), ("cpu_info", .text), ("gpu_info", .text),
        ("backends", .text), ("model_filename", .text), ("model_type", .text), ("model_size", .integer),
        ("model_n_params", .integer), ("n_batch", .integer), ("n_ubatch", .integer), ("n_threads", .integer),
        ("cpu_mask", .text), ("cpu_strict", .integer), ("poll", .integer), ("type_k", .text), ("type_v", .text),
        ("n_gpu_layers", .integer), ("n_cpu_moe", .integer), ("split_mode", .text), ("main_gpu", .integer),
        ("no_kv_offload", .integer), ("flash_attn", .integer), ("devices", .text), ("tensor_split", .text),
        ("tensor_buft_overrides", .text), ("load_mode", .text), ("lazy_mode", .text), ("embeddings", .integer),
        ("no_op_offload", .integer), ("no_host", .integer), ("repack", .integer), ("fit_target", .integer),
        ("fit_min_ctx", .integer), ("n_prompt", .integer), ("n_gen", .integer), ("n_depth", .integer),
        ("test_time", .text), ("avg_ns", .integer), ("stddev_ns", .integer), ("avg_ts", .real), ("stddev_ts", .real),
    ]

    /// Field name to its value as llama-bench prints it (numbers as text).
    public var values: [String: String]
    /// Per repetition: nanoseconds and tokens per second (`samples_ns`, `samples_ts`).
    public var samplesNs: [Int]
    public var samplesTs: [Double]
    /// For the Markdown table: the model's name, the test's, the rate as `mean ± sd`.
    public var modelName: String
    public var test: String
    public var sizeText: String
    public var paramsText: String

    /// One record per throughput test that ran, in the result's order.
    public static func records(_ r: BenchResult) -> [LlamaBenchRecord] {
        var out: [LlamaBenchRecord] = []
        for c in r.cases where c.kind == .throughput && c.status != .skipped {
            guard let m = c.metrics[Metric.tokensPerSecond.rawValue] else { continue }
            let nanos = c.runs.compactMap { $0.seconds.map { Int(($0 * 1e9).rounded()) } }
            let rates = c.runs.compactMap { run -> Double? in
                guard let s = run.seconds, s > 0, let n = run.tokens else { return nil }
                return Double(n) / s
            }
            let meanNs = nanos.isEmpty ? 0 : nanos.reduce(0, +) / nanos.count
            let sdNs: Int = {
                guard nanos.count > 1 else { return 0 }
                let mean = Double(nanos.reduce(0, +)) / Double(nanos.count)
                let v = nanos.reduce(0.0) { $0 + (Double($1) - mean) * (Double($1) - mean) } / Double(nanos.count - 1)
                return Int(v.squareRoot().rounded())
            }()
            // The test from the case's name: pp512, tg128, pp512-d4096.
            let (nPrompt, nGen, nDepth) = Self.shape(c)
            let values: [String: String] = [
                "build_commit": String(r.environment.commit.prefix(8)), "build_number": "0",
                "cpu_info": r.environment.cpuModel, "gpu_info": "", "backends": "CPU",
                "model_filename": r.model.path, "model_type": r.model.name, "model_size": "\(r.model.weightBytes)",
                "model_n_params": "\(r.model.parameters)", "n_batch": "2048", "n_ubatch": "512",
                "n_threads": "\(r.settings.threads)", "cpu_mask": "0x0", "cpu_strict": "0", "poll": "50",
                "type_k": r.settings.kvType, "type_v": r.settings.kvType, "n_gpu_layers": "0", "n_cpu_moe": "0",
                "split_mode": "layer", "main_gpu": "0", "no_kv_offload": "0", "flash_attn": "0", "devices": "auto",
                "tensor_split": "0.00", "tensor_buft_overrides": "none", "load_mode": "mmap", "lazy_mode": "off",
                "embeddings": "0", "no_op_offload": "0", "no_host": "0", "repack": "1", "fit_target": "0",
                "fit_min_ctx": "0", "n_prompt": "\(nPrompt)", "n_gen": "\(nGen)", "n_depth": "\(nDepth)",
                "test_time": r.createdAt, "avg_ns": "\(meanNs)", "stddev_ns": "\(sdNs)",
                "avg_ts": String(format: "%.6f", m.mean), "stddev_ts": String(format: "%.6f", m.standardDeviation),
            ]
            out.append(LlamaBenchRecord(
                values: values, samplesNs: nanos, samplesTs: rates, modelName: r.model.name, test: c.test ?? c.id,
                sizeText: BenchReport.llamaBenchSize(r.model.weightBytes), paramsText: BenchReport.llamaBenchParams(r.model.parameters)))
        }
        return out
    }

    static func shape(_ c: CaseResult) -> (prompt: Int, gen: Int, depth: Int) {
        let name = c.test ?? c.id
        let parts = name.split(separator: " ")
        var depth = 0
        if let at = parts.firstIndex(of: "@"), at + 1 < parts.count { depth = Int(parts[at + 1].dropFirst()) ?? 0 }
        let head = parts.first.map(String.init) ?? ""
        let n = Int(head.dropFirst(2)) ?? 0
        return head.hasPrefix("pp") ? (n, 0, depth) : (0, n, depth)
    }

    // MARK: - printers

    /// The output formats of `-o`.
    public enum Format: String, CaseIterable, Sendable { case md, csv, json, jsonl, sql }

    public static func render(_ records: [LlamaBenchRecord], as format: Format) -> String {
        switch format {
        case .md: return markdown(records)
        case .csv: return csv(records)
        case .json: return json(records)
        case .jsonl: return records.map { jsonObject($0, indent: false) + "\n" }.joined()
        case .sql: return sql(records)
        }
    }

    /// llama-bench's table: model, size, params, backend, threads, (type_k, type_v when
    /// not f16, as llama-bench adds them when not its default), test, t/s.
    public static func markdown(_ records: [LlamaBenchRecord]) -> String {
        let kvColumns = records.contains { $0.values["type_k"] != "f16" }
        var rows = [["model", "size", "params", "backend", "threads"] + (kvColumns ? ["type_k", "type_v"] : []) + ["test", "t/s"]]
        for r in records {
            let ts = String(format: "%.2f ± %.2f", Double(r.values["avg_ts"] ?? "") ?? 0, Double(r.values["stddev_ts"] ?? "") ?? 0)
            rows.append(
                [r.modelName, r.sizeText, r.paramsText, "CPU", r.values["n_threads"] ?? ""]
                    + (kvColumns ? [r.values["type_k"] ?? "", r.values["type_v"] ?? ""] : []) + [r.test, ts])
        }
        let left: Set<String> = ["model", "backend", "type_k", "type_v"]
        let right = Set(rows[0].indices.filter { !left.contains(rows[0][$0]) })
        return BenchReport.alignedTable(rows, rightAligned: right) + "\n"
    }

    static func csv(_ records: [LlamaBenchRecord]) -> String {
        var out = fields.map(\.name).joined(separator: ",") + "\n"
        for r in records {
            out += fields.map { "\"" + (r.values[$0.name] ?? "").replacingOccurrences(of: "\"", with: "\"\"") + "\"" }
                .joined(separator: ",") + "\n"
        }
        return out
    }

    static func jsonValue(_ field: (name: String, type: FieldType), _ value: String) -> String {
        switch field.type {
        case .text: return JSONWriter.quoted(value)
        case .integer, .real: return value.isEmpty ? "null" : value
        }
    }

    static func jsonObject(_ r: LlamaBenchRecord, indent: Bool) -> String {
        let sep = indent ? ",\n    " : ", "
        var parts = fields.map { "\(JSONWriter.quoted($0.name)): \(jsonValue($0, r.values[$0.name] ?? ""))" }
        parts.append("\"samples_ns\": [\(r.samplesNs.map(String.init).joined(separator: ", "))]")
        parts.append("\"samples_ts\": [\(r.samplesTs.map { String(format: "%.6f", $0) }.joined(separator: ", "))]")
        return indent ? "  {\n    " + parts.joined(separator: sep) + "\n  }" : "{" + parts.joined(separator: sep) + "}"
    }

    static func json(_ records: [LlamaBenchRecord]) -> String {
        "[\n" + records.map { jsonObject($0, indent: true) }.joined(separator: ",\n") + "\n]\n"
    }

    /// `CREATE TABLE IF NOT EXISTS llama_bench` and one INSERT per record, as llama-bench's
    /// SQL printer writes them (values quoted, so `sqlite3 db < out.sql` loads them).
    static func sql(_ records: [LlamaBenchRecord]) -> String {
        func sqlType(_ t: FieldType) -> String {
            switch t {
            case .text: return "TEXT"
            case .integer: return "INTEGER"
            case .real: return "REAL"
            }
        }
        var out = "CREATE TABLE IF NOT EXISTS llama_bench (\n"
        out += fields.map { "  \($0.name) \(sqlType($0.type))" }.joined(separator: ",\n") + "\n);\n\n"
        let names = fields.map(\.name).joined(separator: ", ")
        for r in records {
            let values = fields.map { "'" + (r.values[$0.name] ?? "").replacingOccurrences(of: "'", with: "''") + "'" }
            out += "INSERT INTO llama_bench (\(names)) VALUES (\(values.joined(separator: ", ")));\n"
        }
        return out
    }
}
