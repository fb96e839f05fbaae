import Foundation

/// The CPU as /proc/cpuinfo names it: what results record about the machine, and what
/// kernel choices can be made from.
public enum CPUInfo {
    /// The "model name" field, or "unknown" where there is none (not Linux, or no such field).
    public static var modelName: String { field("model name") ?? "unknown" }
    /// The "flags" field split into its feature names (avx2, avx512_vnni, ...); empty where there is none.
    public static var flags: [String] { (field("flags") ?? "").split(separator: " ").map(String.init) }

    static func field(_ name: String) -> String? {
        guard let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(name) {
            if let colon = line.firstIndex(of: ":") { return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces) }
        }
        return nil
    }
}
