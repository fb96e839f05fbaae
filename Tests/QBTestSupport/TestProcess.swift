import Foundation

/// Data written on one thread and read on another after a `DispatchGroup` wait.
public final class DataBox: @unchecked Sendable {
    public var data = Data()
    public init() {}
}

/// Programs run by the tests as a user runs them: a real process, its exit status and output.
public enum TestProcess {
    public struct Run: Sendable {
        public let status: Int32
        public let reason: Process.TerminationReason
        public let stdout: String
        public let stderr: String
    }

    /// Runs `executable` with `arguments` (the environment is this process's with
    /// `environment` set over it) and waits for it. Both pipes are drained at once: read one
    /// after the other, a child that fills the second (a long log, a chatty oracle's warnings)
    /// blocks while the first is still open, and the test hangs.
    public static func run(
        _ executable: URL, _ arguments: [String], cwd: URL? = nil, environment: [String: String] = [:]
    ) throws -> Run {
        let p = Process()
        p.executableURL = executable
        p.arguments = arguments
        if let cwd { p.currentDirectoryURL = cwd }
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment { env[k] = v }
        p.environment = env
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let box = DataBox(), group = DispatchGroup()
        DispatchQueue.global().async(group: group) { box.data = err.fileHandleForReading.readDataToEndOfFile() }
        let o = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        p.waitUntilExit()
        return Run(status: p.terminationStatus, reason: p.terminationReason,
                   stdout: String(decoding: o, as: UTF8.self), stderr: String(decoding: box.data, as: UTF8.self))
    }

    /// A product of this package (`quantbench`): XCTest bundles sit beside the products
    /// they test.
    public static func product(_ name: String) -> URL {
        var dir = Bundle.main.bundleURL
        for _ in 0..<3 where !FileManager.default.fileExists(atPath: dir.appendingPathComponent(name).path) {
            dir = dir.deletingLastPathComponent()
        }
        return dir.appendingPathComponent(name)
    }
}
