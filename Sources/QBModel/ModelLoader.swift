import Foundation
import QBFormats

/// Opens a model from a path of any supported kind: a Hugging Face folder (or a
/// .safetensors file inside one), a GGUF file, or a llama2.c checkpoint; the file says
/// which architecture.
public enum ModelLoader {
    public static func load(path: String) throws -> any LanguageModel {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else {
            throw ModelError.notFound(path: path)
        }
        if isDir.boolValue { return try HuggingFaceModel.load(directory: path) }
        if path.hasSuffix(".safetensors") || path.hasSuffix("config.json") {
            return try HuggingFaceModel.load(directory: URL(fileURLWithPath: path).deletingLastPathComponent().path)
        }
        let file = try MappedFile(path: path)
        let magic = try file.load(UInt32.self, at: 0, item: "magic")
        if magic == GGUFFile.magic { return try GGUFModel.load(GGUFFile(file: file)) }
        return try Llama2cCheckpoint.load(path: path)
    }
}
