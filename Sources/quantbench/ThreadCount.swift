import ArgumentParser
import QBKernels

/// `--threads`, checked the same way by every command that takes it.
enum ThreadCount {
    /// More threads than this is a typo, not a machine.
    static let range = 1...1024

    /// The worker threads `--threads` asks for, every core when it is not given. A count
    /// outside `range` is a usage error.
    static func resolve(_ requested: Int?) throws -> Int {
        if let t = requested, !range.contains(t) {
            throw ValidationError("--threads must be between \(range.lowerBound) and \(range.upperBound)")
        }
        return requested ?? ThreadPool.defaultThreadCount
    }
}
