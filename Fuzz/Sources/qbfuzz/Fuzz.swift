import Foundation
import QBFormats
import QBJinja
import QBRunner
import QBSupport
import QBGeneration
import QBText
import QBOpenAI

/// The parsers, one per target. Each takes the fuzzer's bytes as a file from outside would
/// arrive; any thrown error is fine, a trap or a sanitizer report is a finding.
enum FuzzTarget: String, CaseIterable {
    case gguf, safetensors, tokenizerJSON = "tokenizer-json", sentencepiece, tiktoken, jinja, yamlSuite = "yaml-suite"
    case resultsJSON = "results-json", chatJSONL = "chat-jsonl"
    /// What reaches `serve` from a client (a chat or completion request body) and what
    /// `bench --endpoint` reads from a server (a streamed reply).
    case openAIRequest = "openai-request", eventStream = "event-stream"

    static let current: FuzzTarget = {
        guard let name = ProcessInfo.processInfo.environment["QBFUZZ_TARGET"], let t = FuzzTarget(rawValue: name) else {
            let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")
            FileHandle.standardError.write(Data("set QBFUZZ_TARGET to one of: \(names)\n".utf8))
            exit(2)
        }
        return t
    }()

    /// A file path private to this process, for parsers that read files (mapped).
    static let scratch: String = {
        let dir = ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp"
        return "\(dir)/qbfuzz-\(getpid()).bin"
    }()

    /// Small limits keep each execution short; the limits themselves are what is tested.
    static let jinjaLimits = JinjaLimits(operations: 20_000, outputBytes: 1 << 20, valueBytes: 1 << 20, createdBytes: 4 << 20, seconds: 1)

    func run(_ data: Data) {
        switch self {
        case .gguf:
            guard (try? data.write(to: URL(fileURLWithPath: Self.scratch))) != nil else { return }
            if let f = try? GGUFFile(path: Self.scratch) {
                if let t = try? GGUFTokenizer.tokenizer(f) { _ = t.decode(t.encode("Hello, world", addSpecialTokens: true, parseSpecialTokens: true)) }
            }
        case .safetensors:
            guard (try? data.write(to: URL(fileURLWithPath: Self.scratch))) != nil else { return }
            _ = try? SafetensorsFile(path: Self.scratch)
        case .tokenizerJSON:
            if let t = try? BPETokenizer(json: data, path: "fuzz.json") {
                _ = t.decode(t.encode("Hello, wörld 123 <s>", addSpecialTokens: true, parseSpecialTokens: true))
            }
        case .sentencepiece:
            if let t = try? SentencePieceModelFile.tokenizer(data: data, path: "fuzz.model") {
                _ = t.decode(t.encode("Hello, wörld 123", addSpecialTokens: true, parseSpecialTokens: false))
            }
        case .tiktoken:
            if let t = try? Tiktoken.llama3(data: data, path: "fuzz.tiktoken") {
                _ = t.decode(t.encode("Hello, wörld 123", addSpecialTokens: true, parseSpecialTokens: true))
            }
        case .jinja:
            let source = String(decoding: data, as: UTF8.self)
            guard let t = try? JinjaTemplate(source: source, name: "fuzz") else { return }
            let context: JinjaObject = [
                "messages": [["role": "system", "content": "Be brief."], ["role": "user", "content": "Hi <b>"], ["role": "assistant", "content": "Hello"]],
                "add_generation_prompt": true, "bos_token": "<s>", "eos_token": "</s>", "tools": [["name": "f", "parameters": ["a": 1]]],
            ]
            _ = try? t.render(context, now: Date(timeIntervalSince1970: 0), limits: Self.jinjaLimits)
        case .yamlSuite:
            _ = try? SuiteLoader.parse(String(decoding: data, as: UTF8.self), path: "fuzz.yaml", defaultName: "fuzz")
        case .resultsJSON:
            _ = try? ResultsFile.decode(data, path: "fuzz.json")
        case .chatJSONL:
            _ = try? ChatTranscript.decode(String(decoding: data, as: UTF8.self), path: "fuzz.jsonl")
        case .openAIRequest:
            // The first byte picks the endpoint, as the two routes share one parser.
            guard let first = data.first else { return }
            _ = try? CompletionRequest.parse(Data(data.dropFirst()), chat: first & 1 == 0)
        case .eventStream:
            // The first byte picks chat or completions and the piece size the body arrives in.
            guard let first = data.first else { return }
            _ = StreamCheck.record(ofBody: Array(data.dropFirst()), chat: first & 1 == 0, maxTokens: 16, pieceSize: Int(first >> 1) + 1)
        }
    }

    /// Seeds made by the project's own writers, written to `dir` (QBFUZZ_WRITE_SEEDS).
    func writeSeeds(to dir: URL) throws {
        switch self {
        case .gguf:
            var w = GGUFWriter()
            w.add("general.architecture", .string("llama"))
            w.add("llama.context_length", .uint32(64))
            w.add("tokenizer.ggml.model", .string("llama"))
            w.add("tokenizer.ggml.tokens", .array(.string, ["<unk>", "<s>", "</s>", "▁", "H", "e", "l", "o", "▁H", "ll"].map { .string($0) }))
            w.add("tokenizer.ggml.scores", .array(.float32, (0..<10).map { .float32(Float(-$0)) }))
            w.add("tokenizer.ggml.token_type", .array(.int32, [GGUFValue.int32(2), .int32(3), .int32(3)] + Array(repeating: GGUFValue.int32(1), count: 7)))
            w.tensors.append(GGUFWriter.Tensor(name: "token_embd.weight", dims: [4, 10], type: 0) { buf in buf.initializeMemory(as: UInt8.self, repeating: 0) })
            try w.write(to: dir.appendingPathComponent("writer.gguf"))
        case .safetensors:
            try SafetensorsWriter.writeRaw(
                path: dir.appendingPathComponent("writer.safetensors").path,
                tensors: [.init(name: "a.weight", dtypeName: "F32", shape: [2, 3], byteCount: 24), .init(name: "b", dtypeName: "BF16", shape: [4], byteCount: 8)]
            ) { _, p in memset(p, 0, 24) }
        case .chatJSONL:
            let c = ChatConversation(system: "Be brief.", turns: [ChatTurn(user: "Hi", assistant: "Hello", finishReason: .endOfSequence), ChatTurn(user: "ünïcode \"q\"", assistant: "\n")])
            try Data(ChatTranscript.encode(c).utf8).write(to: dir.appendingPathComponent("writer.jsonl"))
        case .jinja:
            try Data("{% for m in messages %}{{ m.role ~ ': ' ~ m.content|trim }}{% if not loop.last %}\n{% endif %}{% endfor %}{{ tools|tojson(indent=2) }}".utf8)
                .write(to: dir.appendingPathComponent("writer.jinja"))
        case .tokenizerJSON:
            try Data(SyntheticTokenizer.tokenizerJSON(vocabularySize: 300, merges: 40).utf8).write(to: dir.appendingPathComponent("writer-tokenizer.json"))
        case .tiktoken:
            // Llama 3's format: base64 token, rank; 256 byte tokens then a few merges.
            var lines = (0..<256).map { "\(Data([UInt8($0)]).base64EncodedString()) \($0)" }
            for (i, m) in ["he", "ll", "hell", "hello", " w", "or"].enumerated() { lines.append("\(Data(m.utf8).base64EncodedString()) \(256 + i)") }
            try Data(lines.joined(separator: "\n").utf8).write(to: dir.appendingPathComponent("writer.tiktoken"))
        case .openAIRequest:
            let chat = #"{"model":"m","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":[{"type":"text","text":"Hi"}]}],"#
                + #""max_tokens":16,"temperature":0.7,"top_p":0.9,"seed":7,"stop":["\n\n","END"],"stream":true,"stream_options":{"include_usage":true}}"#
            try Data([0] + Array(chat.utf8)).write(to: dir.appendingPathComponent("chat.json"))
            let text = #"{"model":"m","prompt":"Once upon a time","max_tokens":8,"temperature":0,"stop":"."}"#
            try Data([1] + Array(text.utf8)).write(to: dir.appendingPathComponent("completion.json"))
        case .eventStream:
            let chunks = [
                #"{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"},"finish_reason":null}]}"#,
                #"{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":"stop"}]}"#,
                #"{"id":"c","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}"#,
            ]
            let body = chunks.map { "data: \($0)\r\n\r\n" }.joined() + ": keep-alive\n\ndata: [DONE]\n\n"
            try Data([6] + Array(body.utf8)).write(to: dir.appendingPathComponent("chat-stream.txt"))
        default:
            break
        }
    }
}

@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> CInt {
    let target = FuzzTarget.current
    if let dir = ProcessInfo.processInfo.environment["QBFUZZ_WRITE_SEEDS"] {
        do {
            try target.writeSeeds(to: URL(fileURLWithPath: dir))
        } catch {
            FileHandle.standardError.write(Data("cannot write seeds: \(error)\n".utf8))
            exit(2)
        }
        exit(0)
    }
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    FuzzTarget.current.run(Data(bytes: bytes, count: count))
    return 0
}

/// SwiftPM links an executable target's entry point under this name; hand control to
/// libFuzzer's driver.
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt

@_cdecl("qbfuzz_main")
public func qbfuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    var argc = argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    return LLVMFuzzerRunDriver(&argc, &argv, { fuzzOne($0, $1) })
}
