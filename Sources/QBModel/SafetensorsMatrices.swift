import QBFormats
import QBKernels

// Safetensors entries as the kernels' matrices: the file format knows dtype names and
// byte ranges, the kernels know which element types and quantizations they compute on.
extension SafetensorsEntry {
    /// The element type when it is one the kernels read.
    public var dtype: DType? { DType(rawValue: dtypeName) }
}

extension SafetensorsFile {
    /// An MLX-quantized matrix: `prefix.weight` (uint32, `[rows][cols * bits / 32]`),
    /// `prefix.scales` and `prefix.biases` (`[rows][cols / group]`, f32/f16/bf16).
    public func mlxMatrix(_ prefix: String, rows: Int, cols: Int, bits: Int, groupSize: Int) throws -> Matrix {
        let path = file.path
        guard MLXQuantization.supportedBits.contains(bits), MLXQuantization.supportedGroups.contains(groupSize) else {
            throw ModelError.invalidTensor(path: path, tensor: prefix + ".weight", reason: "MLX quantization with \(bits) bits and group \(groupSize) is not supported")
        }
        guard cols % groupSize == 0 else {
            throw ModelError.invalidTensor(path: path, tensor: prefix + ".weight", reason: "width \(cols) is not a multiple of the group size \(groupSize)")
        }
        func entry(_ suffix: String) throws -> SafetensorsEntry {
            guard let e = entries[prefix + suffix] else { throw ModelError.missingTensor(path: path, tensor: prefix + suffix) }
            return e
        }
        let w = try entry(".weight"), s = try entry(".scales"), b = try entry(".biases")
        guard w.dtypeName == "U32" else { throw ModelError.unsupportedDType(path: path, tensor: w.name, dtype: w.dtypeName) }
        guard w.shape == [rows, cols * bits / 32] else {
            throw ModelError.shapeMismatch(path: path, tensor: w.name, expected: [rows, cols * bits / 32], found: w.shape)
        }
        guard let sd = s.dtype else { throw ModelError.unsupportedDType(path: path, tensor: s.name, dtype: s.dtypeName) }
        for e in [s, b] {
            guard e.shape == [rows, cols / groupSize] else {
                throw ModelError.shapeMismatch(path: path, tensor: e.name, expected: [rows, cols / groupSize], found: e.shape)
            }
            guard e.dtypeName == s.dtypeName else {
                throw ModelError.unsupportedDType(path: path, tensor: e.name, dtype: e.dtypeName + " (scales are " + s.dtypeName + ")")
            }
        }
        let parts = [w, s, b].map { file.base + $0.range.lowerBound }
        guard parts.enumerated().allSatisfy({ Int(bitPattern: $1) % ($0 == 0 ? 4 : sd.size) == 0 }) else {
            throw ModelError.invalidTensor(path: path, tensor: prefix, reason: "misaligned data")
        }
        return Matrix(
            format: .mlx(MLXQuantization(bits: bits, groupSize: groupSize, scaleType: sd)), rows: rows, cols: cols,
            base: parts[0], scales: parts[1], biases: parts[2], owner: file)
    }

    /// A matrix view of tensor `name`, checked to have `rows` x `cols` elements (1-D tensors
    /// count as one row) and a dtype the kernels read.
    public func matrix(_ name: String, rows: Int, cols: Int) throws -> Matrix {
        guard let e = entries[name] else { throw ModelError.missingTensor(path: file.path, tensor: name) }
        guard let dtype = e.dtype else {
            throw ModelError.unsupportedDType(path: file.path, tensor: name, dtype: e.dtypeName)
        }
        let expected = rows == 1 ? [cols] : [rows, cols]
        guard e.shape == expected else {
            throw ModelError.shapeMismatch(path: file.path, tensor: name, expected: expected, found: e.shape)
        }
        let p = file.base + e.range.lowerBound
        if Int(bitPattern: p) % dtype.size != 0 {
            // Misaligned data (allowed by the format, rare in practice): copy once into
            // aligned memory rather than read through a misaligned typed pointer.
            let copy = UnsafeMutableRawPointer.allocate(byteCount: e.range.count, alignment: 64)
            copy.copyMemory(from: p, byteCount: e.range.count)
            let owner = OwnedBytes(copy)
            return Matrix(dtype: dtype, rows: rows, cols: cols, base: UnsafeRawPointer(copy), owner: owner)
        }
        return Matrix(dtype: dtype, rows: rows, cols: cols, base: p, owner: file)
    }
}

/// Keeps an allocation alive for as long as a view points into it.
final class OwnedBytes: @unchecked Sendable {
    let pointer: UnsafeMutableRawPointer
    init(_ p: UnsafeMutableRawPointer) { pointer = p }
    deinit { pointer.deallocate() }
}
