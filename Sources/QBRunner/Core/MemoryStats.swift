import CTCMalloc
import Foundation

/// Memory figures of this process: tcmalloc's own accounting and the kernel's view.
public struct MemoryStats: Sendable, Codable {
    /// Bytes the program holds from tcmalloc (`generic.current_allocated_bytes`).
    public var allocatedBytes: Int?
    /// Bytes tcmalloc has taken from the system (`generic.heap_size`).
    public var heapBytes: Int?
    /// Resident set size now (VmRSS) and its peak (VmHWM), in bytes.
    public var residentBytes: Int?
    public var peakResidentBytes: Int?

    public static func current() -> MemoryStats {
        let status = procStatus()
        return MemoryStats(
            allocatedBytes: tcmalloc("generic.current_allocated_bytes"),
            heapBytes: tcmalloc("generic.heap_size"),
            residentBytes: status["VmRSS"], peakResidentBytes: status["VmHWM"])
    }

    /// Resets the kernel's peak-RSS mark (VmHWM) to the current RSS, where the kernel
    /// allows it (Linux ≥ 4.0, writing 5 to /proc/self/clear_refs). Returns whether it did.
    @discardableResult
    public static func resetPeak() -> Bool {
        guard let h = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return false }
        defer { try? h.close() }
        return (try? h.write(contentsOf: Data("5".utf8))) != nil
    }

    static func tcmalloc(_ property: String) -> Int? {
        var value = 0 as size_t
        let ok = property.withCString { MallocExtension_GetNumericProperty($0, &value) }
        return ok != 0 ? Int(value) : nil
    }

    static func procStatus() -> [String: Int] {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return [:] }
        var out: [String: Int] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, parts[1].hasSuffix("kB") else { continue }
            let n = parts[1].dropLast(2).trimmingCharacters(in: .whitespaces)
            if let kb = Int(n) { out[String(parts[0])] = kb * 1024 }
        }
        return out
    }
}
