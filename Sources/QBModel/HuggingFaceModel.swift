import Foundation
import QBSupport
import QBFormats
import QBKernels

/// A Hugging Face model folder: config.json plus model.safetensors or a sharded
/// model.safetensors.index.json, of any architecture `model_type` names. Weights stay in
/// the mapped files; RoPE pairs dimensions by halves, as transformers does.
public enum HuggingFaceModel {
    public static func load(directory: String) throws -> any LanguageModel {
        let dir = URL(fileURLWithPath: directory)
        let configPath = dir.appendingPathComponent("config.json").path
        let config = try TransformerConfig.load(path: configPath)
        let architecture = try config.architecture(path: configPath)
        let store = try TensorStore(directory: dir)

        // With an MLX `quantization` entry, a module stored as uint32 with scales beside it
        // is quantized with its setting; anything else is a plain tensor.
        func matrix(_ name: String, _ rows: Int, _ cols: Int) throws -> Matrix {
            let module = String(name.dropLast(".weight".count))
            if let q = config.quantization, store.location[module + ".scales"] != nil {
                guard let setting = q.setting(for: module) else {
                    throw ModelError.invalidField(path: configPath, field: "quantization.\(module)", reason: "says unquantized, but scales are stored")
                }
                return try store.file(for: name).mlxMatrix(module, rows: rows, cols: cols, bits: setting.bits, groupSize: setting.groupSize)
            }
            return try store.file(for: name).matrix(name, rows: rows, cols: cols)
        }
        let weights = try ModelWeights.load(
            config: config, table: architecture.layerTable, names: .huggingFace, path: directory,
            normOffset: architecture.huggingFaceNormOffset, matrix: matrix)
        let source = ModelSource(
            format: config.quantization == nil ? .huggingFace : .mlx, path: directory, tensors: store.infos, directory: directory)
        let eos = (config.eosTokenId?.ids ?? []).map { Int32(truncatingIfNeeded: $0) }
        return try architecture.makeModel(ModelParts(
            config: config, rope: try config.rope(style: .halves, path: configPath), weights: weights, source: source,
            stopTokens: eos, bosToken: config.bosTokenId.map { Int32(truncatingIfNeeded: $0) }))
    }
}

/// The safetensors files of a folder, and which one holds each tensor.
struct TensorStore {
    let files: [String: SafetensorsFile]
    let location: [String: String]

    init(directory dir: URL) throws {
        let single = dir.appendingPathComponent("model.safetensors").path
        let index = dir.appendingPathComponent("model.safetensors.index.json").path
        let fm = FileManager.default
        if fm.fileExists(atPath: single) {
            let f = try SafetensorsFile(path: single)
            files = ["model.safetensors": f]
            location = f.entries.keys.reduce(into: [:]) { $0[$1] = "model.safetensors" }
        } else if fm.fileExists(atPath: index) {
            guard let data = fm.contents(atPath: index), (try? NestingDepth.checkJSON(data)) != nil,
                  let obj = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
            else { throw ModelError.invalidField(path: index, field: "JSON", reason: "not a JSON object") }
            guard let map = obj["weight_map"] as? [String: String] else {
                throw ModelError.invalidField(path: index, field: "weight_map", reason: "missing or not a map of strings")
            }
            var opened: [String: SafetensorsFile] = [:]
            for name in Set(map.values).sorted() {
                guard !name.contains("/"), !name.hasPrefix(".") else {
                    throw ModelError.invalidField(path: index, field: "weight_map", reason: "shard name \(name) leaves the folder")
                }
                opened[name] = try SafetensorsFile(path: dir.appendingPathComponent(name).path)
            }
            for (tensor, shard) in map where opened[shard]?.entries[tensor] == nil {
                throw ModelError.missingTensor(path: dir.appendingPathComponent(shard).path, tensor: tensor)
            }
            files = opened
            location = map
        } else {
            if !fm.fileExists(atPath: dir.path) { throw ModelError.notFound(path: dir.path) }
            throw ModelError.notFound(path: single)
        }
    }

    func file(for tensor: String) throws -> SafetensorsFile {
        guard let shard = location[tensor], let f = files[shard] else {
            throw ModelError.missingTensor(path: files.values.first?.file.path ?? "model.safetensors", tensor: tensor)
        }
        return f
    }

    var infos: [TensorInfo] {
        files.values.flatMap { f in
            f.entries.values.map { TensorInfo(name: $0.name, dtype: $0.dtypeName, shape: $0.shape, bytes: $0.range.count) }
        }.sorted { $0.name.localizedStandardCompare($1.name) == .orderedAscending }
    }
}
