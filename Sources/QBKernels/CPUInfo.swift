import Foundation

/// The CPU as /proc/cpuinfo names it: what results record about the machine, and what
/// kernel choices can be made from.
public enum CPUInfo {
    /// The "model name" field, or "unknown" where there is none (not Linux, or no such field).
    public static var modelName: String { field("model name") ?? "unknown" }
    /// The "flags" field split into its feature names (avx2, avx512_vnni, ...); empty where there is none.
    public static var flags: [String] { (field("flags") ?? "").split(separator: " ").map(String.init) }
    /// "family 25 model 17": the "cpu family" and "model" fields, which tell CPU generations
    /// apart where a VM names every one alike ("AMD EPYC" on Zen 3, 4 and 5); nil where either
    /// is missing or not a number.
    public static var cpuid: String? {
        guard let text = cpuinfo else { return nil }
        return cpuid(cpuinfo: text)
    }

    static var cpuinfo: String? { try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) }

    /// `cpuid` of a /proc/cpuinfo text.
    public static func cpuid(cpuinfo text: String) -> String? {
        guard let family = field("cpu family", in: text).flatMap({ Int($0) }), let model = field("model", in: text).flatMap({ Int($0) }) else {
            return nil
        }
        return "family \(family) model \(model)"
    }

    static func field(_ name: String) -> String? { cpuinfo.flatMap { field(name, in: $0) } }

    /// The first processor's value for the key `name` exactly ("model" is not "model name").
    static func field(_ name: String, in text: String) -> String? {
        for line in text.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":"), line[..<colon].trimmingCharacters(in: .whitespaces) == name else { continue }
            return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return nil
    }
}
