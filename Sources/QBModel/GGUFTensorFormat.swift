import QBFormats
import QBKernels

// GGUF's type ids as the kernels' weight formats: the file format knows ids and block
// sizes, the kernels know what they can compute on.
extension GGUFTensor {
    /// The weight format, when the kernels read it.
    public var format: WeightFormat? {
        switch type {
        case 0: return .dense(.f32)
        case 1: return .dense(.f16)
        case 30: return .dense(.bf16)
        default: return GGMLType(rawValue: Int32(bitPattern: type)).map { .ggml($0) }
        }
    }

    public var typeName: String { format?.name ?? "type \(type)" }
}

extension GGUFFile {
    /// A matrix view of a tensor, checked to be `rows` x `cols` (1-D when rows is 1).
    public func matrix(_ name: String, rows: Int, cols: Int) throws -> Matrix {
        guard let t = tensor(name) else { throw ModelError.missingTensor(path: file.path, tensor: name) }
        guard let format = t.format else {
            throw ModelError.unsupportedDType(path: file.path, tensor: name, dtype: t.typeName)
        }
        let expected = rows == 1 ? [cols] : [cols, rows]
        guard t.dims == expected || (rows == 1 && t.dims == [cols, 1]) else {
            throw ModelError.shapeMismatch(path: file.path, tensor: name, expected: expected, found: t.dims)
        }
        return Matrix(format: format, rows: rows, cols: cols, base: file.base + t.range.lowerBound, owner: file)
    }
}
