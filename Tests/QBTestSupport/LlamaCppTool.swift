import Foundation

/// What one of llama.cpp's tools (llama-tokenize, llama-simple, ...) printed on standard
/// output, and its exit status. Its log goes to /dev/null, not to a pipe nobody reads:
/// llama.cpp logs enough to fill one and block.
public func runLlamaCppTool(_ executable: URL, _ arguments: [String]) throws -> (status: Int32, stdout: String) {
    let p = Process()
    p.executableURL = executable
    p.arguments = arguments
    let out = Pipe()
    p.standardOutput = out
    p.standardError = FileHandle.nullDevice
    try p.run()
    let data = out.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return (p.terminationStatus, String(decoding: data, as: UTF8.self))
}
