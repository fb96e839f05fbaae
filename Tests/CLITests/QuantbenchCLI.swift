import Foundation

/// Data written on one thread and read on another after a `DispatchGroup` wait.
final class DataBox: @unchecked Sendable { var data = Data() }

/// The built `quantbench` (or another program) run as a user runs it: a real process, both
/// pipes drained at once, its exit status and output. Shared by the CLI tests.
enum QuantbenchCLI {
    static var binary: URL {
        var dir = Bundle.main.bundleURL
        for _ in 0..<3 where !FileManager.default.fileExists(atPath: dir.appendingPathComponent("quantbench").path) {
            dir = dir.deletingLastPathComponent()
        }
        return dir.appendingPathComponent("quantbench")
    }

    struct Run { let status: Int32; let reason: Process.TerminationReason; let stdout: String; let stderr: String }

    static func run(
        _ executable: URL, _ args: [String], cwd: URL? = nil, environment: [String: String] = [:]
    ) throws -> Run {
        let p = Process()
        p.executableURL = executable
        p.arguments = args
        if let cwd { p.currentDirectoryURL = cwd }
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment { env[k] = v }
        p.environment = env
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        // Read both pipes at once so neither fills while the other is drained.
        let box = DataBox(), group = DispatchGroup()
        DispatchQueue.global().async(group: group) { box.data = err.fileHandleForReading.readDataToEndOfFile() }
        let o = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        let e = box.data
        p.waitUntilExit()
        return Run(status: p.terminationStatus, reason: p.terminationReason,
                   stdout: String(decoding: o, as: UTF8.self), stderr: String(decoding: e, as: UTF8.self))
    }

    static func quantbench(_ args: [String], cwd: URL? = nil, environment: [String: String] = [:]) throws -> Run {
        try run(binary, args, cwd: cwd, environment: environment)
    }

}
