import ArgumentParser
import Foundation
import QBKernels
import QBRunner
import QBSupport

@main
struct QuantBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "quantbench",
        abstract: "A quantized LLM inference engine and the harness that measures it.",
        version: EnvironmentInfo.versionDescription,
        subcommands: [Generate.self, Inspect.self, MakeModel.self, Quantize.self, RooflineCommand.self, Bench.self, Compare.self, AB.self, Eval.self, Chat.self, Serve.self, Template.self, Tokenize.self, History.self, Import.self])

    /// As ArgumentParser's, but every error is shown in the program's words (see
    /// `PresentableError`): no raw Foundation text and no echoed value of unbounded length.
    static func main() async {
        // Out of memory inside the runtime or a library ends in one line, not a backtrace.
        OutOfMemory.installAbortHandler()
        // A file-size limit makes writes fail (a clean error, the previous files kept)
        // instead of killing the process.
        signal(SIGXFSZ, SIG_IGN)
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: PresentableError.wrap(error))
        }
    }
}

/// An error as the user sees it: Foundation's errors as `path: reason`, every message cut
/// to a readable length (a 100 KB flag value is not echoed whole).
struct PresentableError: Error, CustomStringConvertible {
    let description: String

    /// The longest message shown; longer ones keep their start and end.
    static let limit = 1_000

    static func wrap(_ error: any Error) -> any Error {
        // ArgumentParser's own outcomes (help, exit codes, usage errors) keep their form;
        // their text is cut only when it is a validation message.
        if let v = error as? ValidationError {
            return v.message.count > limit ? ValidationError(cut(v.message)) : v
        }
        if error is ExitCode || error is CleanExit { return error }
        if FoundationErrorText.isFoundation(error) { return PresentableError(description: FoundationErrorText.describe(error)) }
        let text = "\(error)"
        let typeName = String(reflecting: type(of: error))
        // ArgumentParser's parse errors are internal types; leave their presentation to it.
        if typeName.hasPrefix("ArgumentParser.") { return error }
        return text.count > limit ? PresentableError(description: cut(text)) : error
    }

    static func cut(_ s: String) -> String {
        "\(s.prefix(limit * 3 / 4)) ...[\(s.count - limit) characters cut]... \(s.suffix(limit / 4))"
    }
}
