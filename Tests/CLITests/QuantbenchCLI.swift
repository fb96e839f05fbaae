import Foundation
import QBTestSupport

/// The built `quantbench` run as a user runs it (TestProcess), shared by the CLI tests.
enum QuantbenchCLI {
    static var binary: URL { TestProcess.product("quantbench") }

    typealias Run = TestProcess.Run

    static func run(
        _ executable: URL, _ args: [String], cwd: URL? = nil, environment: [String: String] = [:]
    ) throws -> Run {
        try TestProcess.run(executable, args, cwd: cwd, environment: environment)
    }

    static func quantbench(_ args: [String], cwd: URL? = nil, environment: [String: String] = [:]) throws -> Run {
        try run(binary, args, cwd: cwd, environment: environment)
    }
}
