import Foundation
import QBSupport
import QBFormats

/// Opens a tokenizer from a path of any kind the engine reads, recognising the format by
/// content rather than by name (a Llama 3 `tokenizer.model` is a tiktoken rank file, a
/// Llama 2 one a SentencePiece protocol buffer).
///
/// | path | read as |
/// | --- | --- |
/// | a folder | its tokenizer.json, else tokenizer.model, else tokenizer.bin, else its one .gguf |
/// | tokenizer.json (JSON) | `BPETokenizer` (byte-level or SentencePiece-style), with tokenizer_config.json beside it |
/// | tiktoken ranks | `BPETokenizer` with Llama 3's pattern and special tokens (`Tiktoken.llama3`) |
/// | SentencePiece model | `SentencePieceTokenizer` (BPE models) |
/// | GGUF | its `tokenizer.ggml.*` vocabulary (`GGUFTokenizer`) |
/// | llama2.c tokenizer.bin | `Llama2cTokenizer` (the vocabulary size from the model, or counted from the file) |
///
/// Every failure is a `TokenizerError` naming the path and what is wrong.
public enum TokenizerFactory {
    /// The formats `open` recognises.
    public enum Format: String, Sendable, CaseIterable {
        case tokenizerJSON = "tokenizer.json"
        case tiktoken = "tiktoken ranks"
        case sentencePiece = "SentencePiece model"
        case gguf = "GGUF"
        case llama2c = "llama2.c tokenizer.bin"
    }

    /// Names looked for in a folder, in order of preference.
    public static let folderCandidates = ["tokenizer.json", "tokenizer.model", "tokenizer.bin"]

    /// Opens the tokenizer at `path` (a file or a folder holding one).
    /// - Parameters:
    ///   - vocabularySize: the model's vocabulary size, needed only by llama2.c tokenizer.bin
    ///     files (which do not store it); without it the file's token count is used.
    ///   - eosTokenIDs: replaces the ids that end generation (a model's config often lists
    ///     several); nil keeps what the tokenizer declares.
    public static func open(_ path: String, vocabularySize: Int? = nil, eosTokenIDs: Set<TokenID>? = nil) throws -> any Tokenizer {
        let file = try resolve(path)
        let data: Data
        do {
            // A GGUF file is the whole model: its vocabulary is read through the mapping,
            // never by loading gigabytes of weights into memory.
            let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: file))
            let head = try handle.read(upToCount: 4) ?? Data()
            try handle.close()
            if detect(head) == .gguf { return try GGUFTokenizer.tokenizer(path: file, eosTokenIDs: eosTokenIDs) }
            data = try Data(contentsOf: URL(fileURLWithPath: file), options: .mappedIfSafe)
        } catch let error as TokenizerError {
            throw error
        } catch {
            throw TokenizerError.unreadable(path: file, reason: FoundationErrorText.reason(error))
        }
        guard let format = detect(data) else {
            throw TokenizerError.unsupported(
                path: file,
                feature: "file format (not a tokenizer.json, tiktoken ranks, SentencePiece model, GGUF file or llama2.c tokenizer.bin)")
        }
        switch format {
        case .tokenizerJSON:
            let url = URL(fileURLWithPath: file)
            // The sibling config and template are read only for an actual tokenizer.json
            // next to them, as transformers does.
            return try BPETokenizer(contentsOf: url, eosTokenIDs: eosTokenIDs)
        case .tiktoken:
            return try Tiktoken.llama3(data: data, path: file, eosTokenIDs: eosTokenIDs)
        case .sentencePiece:
            return try SentencePieceModelFile.tokenizer(data: data, path: file, eosTokenIDs: eosTokenIDs)
        case .gguf:
            return try GGUFTokenizer.tokenizer(path: file, eosTokenIDs: eosTokenIDs)
        case .llama2c:
            guard let size = vocabularySize ?? Llama2cTokenizer.tokenCount(in: data) else {
                throw TokenizerError.malformed(path: file, field: "(file)", reason: "not a sequence of tokenizer.bin records, and no vocabulary size was given")
            }
            return try Llama2cTokenizer(data: data, vocabularySize: size, path: file)
        }
    }

    /// The file `path` stands for: itself, or for a folder the tokenizer file in it.
    public static func resolve(_ path: String) throws -> String {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw TokenizerError.unreadable(path: path, reason: "no such file or directory")
        }
        guard isDirectory.boolValue else { return path }
        let folder = URL(fileURLWithPath: path)
        for name in folderCandidates {
            let candidate = folder.appendingPathComponent(name).path
            if FileManager.default.fileExists(atPath: candidate) { return candidate }
        }
        let ggufs = ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).filter { $0.hasSuffix(".gguf") }.sorted()
        if ggufs.count == 1 { return folder.appendingPathComponent(ggufs[0]).path }
        let reason = ggufs.isEmpty
            ? "the folder holds no tokenizer (looked for \(folderCandidates.joined(separator: ", ")) and a .gguf file)"
            : "the folder holds no tokenizer file and several .gguf files (\(ggufs.joined(separator: ", "))); name one"
        throw TokenizerError.unreadable(path: path, reason: reason)
    }

    /// The format of a tokenizer file's bytes, or nil when none matches.
    public static func detect(_ data: Data) -> Format? {
        let head = [UInt8](data.prefix(8))
        if head.count >= 4, head[0] == 0x47, head[1] == 0x47, head[2] == 0x55, head[3] == 0x46 { return .gguf }
        if let first = data.prefix(4096).first(where: { ![0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains($0) }), first == 0x7B {
            return .tokenizerJSON
        }
        if Tiktoken.isRankFile(data) { return .tiktoken }
        if SentencePieceModelFile.isModelFile(data) { return .sentencePiece }
        if Llama2cTokenizer.tokenCount(in: data) != nil { return .llama2c }
        return nil
    }
}
