import QBFormats
import QBKernels

// Every weight conversion of a model (quantize-at-load, GGUF and MLX export) goes through
// here, so a value the quantizers cannot encode is reported as the model file's tensor,
// by the name the file uses, and never reaches an output.
extension LanguageModel {
    /// The names this model's source file gives its tensors (GGUF's, or Hugging Face's for
    /// safetensors and MLX folders; llama2.c files have none, so those are used too).
    var sourceTensorNames: TensorNames { source.format == .gguf ? .gguf : .huggingFace }

    /// The source file's name for layer `l`'s matrix `role`.
    func sourceTensorName(layer l: Int, role: LayerRole) -> String {
        guard let spec = architecture.layerTable.first(where: { $0.role == role }) else { return "layer \(l) \(role.rawValue)" }
        return sourceTensorNames.layer(l, spec)
    }

    /// `m` (the source tensor `tensor`) converted to `format`; NaN, infinite and
    /// unrepresentable values throw `ModelError.invalidTensor` naming the file, the tensor
    /// and the first bad element.
    func convertChecked(_ m: Matrix, tensor: String, to format: WeightFormat, pool: ThreadPool) throws -> Matrix {
        do {
            return try Quantizer.convert(m, to: format, pool: pool)
        } catch let e as UnquantizableWeight {
            throw ModelError.invalidTensor(path: source.path, tensor: tensor, reason: "\(e) (converting to \(format.name))")
        }
    }
}
