import Foundation
import QBKernels

/// One tensor entry of a safetensors header.
public struct SafetensorsEntry: Sendable {
    public let name: String
    /// The dtype string as written (F32, BF16, I64, ...).
    public let dtypeName: String
    public let shape: [Int]
    /// Byte range inside the file (already offset past the header).
    public let range: Range<Int>

    /// The element type when it is one the kernels read.
    public var dtype: DType? { DType(rawValue: dtypeName) }
}

/// A safetensors file, mapped and with its header parsed and checked against the file:
/// every range inside the data section, sizes matching shapes, no two tensors overlapping.
public final class SafetensorsFile: @unchecked Sendable {
    public let file: MappedFile
    public let entries: [String: SafetensorsEntry]
    public let metadata: [String: String]

    static let elementSizes: [String: Int] = [
        "F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1, "U8": 1,
        "U16": 2, "U32": 4, "U64": 8, "BOOL": 1, "F8_E4M3": 1, "F8_E5M2": 1,
    ]
    /// No real header comes near this; a larger claim is a corrupt length field.
    static let maxHeaderBytes = 100 << 20

    public convenience init(path: String) throws {
        try self.init(file: MappedFile(path: path))
    }

    public init(file: MappedFile) throws {
        self.file = file
        let path = file.path
        let headerLength = try file.load(UInt64.self, at: 0, item: "header length")
        guard headerLength <= UInt64(Self.maxHeaderBytes) else {
            throw ModelError.invalidField(path: path, field: "header length", reason: "\(headerLength) bytes is absurd")
        }
        let n = Int(headerLength)
        let raw = try file.bytes(at: 8, count: n, item: "JSON header")
        let json: Any
        do {
            json = try JSONSerialization.jsonObject(with: Data(raw), options: [])
        } catch {
            throw ModelError.invalidField(path: path, field: "JSON header", reason: "not valid JSON")
        }
        guard let top = json as? [String: Any] else {
            throw ModelError.invalidField(path: path, field: "JSON header", reason: "not a JSON object")
        }
        let dataStart = 8 + n
        let dataSize = file.size - dataStart
        var entries: [String: SafetensorsEntry] = [:]
        var meta: [String: String] = [:]
        for (name, value) in top {
            if name == "__metadata__" {
                if let m = value as? [String: Any] {
                    for (k, v) in m { if let s = v as? String { meta[k] = s } }
                }
                continue
            }
            guard let e = value as? [String: Any] else {
                throw ModelError.invalidTensor(path: path, tensor: name, reason: "entry is not an object")
            }
            guard let dt = e["dtype"] as? String else {
                throw ModelError.invalidTensor(path: path, tensor: name, reason: "missing dtype")
            }
            guard let esize = Self.elementSizes[dt] else {
                throw ModelError.unsupportedDType(path: path, tensor: name, dtype: dt)
            }
            guard let shapeAny = e["shape"] as? [Any], let offs = e["data_offsets"] as? [Any], offs.count == 2 else {
                throw ModelError.invalidTensor(path: path, tensor: name, reason: "missing shape or data_offsets")
            }
            var shape: [Int] = []
            var count = 1
            for d in shapeAny {
                guard let v = Self.integer(d), v >= 0 else {
                    throw ModelError.invalidTensor(path: path, tensor: name, reason: "shape \(shapeAny) is not non-negative integers")
                }
                let (p, o) = count.multipliedReportingOverflow(by: v)
                guard !o, p <= Int(Int32.max) * 64 else {
                    throw ModelError.invalidTensor(path: path, tensor: name, reason: "shape \(shapeAny) is absurdly large")
                }
                shape.append(v)
                count = p
            }
            guard let b = Self.integer(offs[0]), let end = Self.integer(offs[1]), b >= 0, end >= b else {
                throw ModelError.invalidTensor(path: path, tensor: name, reason: "data_offsets \(offs) are not an increasing pair")
            }
            guard end <= dataSize else {
                throw ModelError.invalidTensor(
                    path: path, tensor: name, reason: "data_offsets end \(end) is past the end of the data (\(dataSize) bytes)")
            }
            guard end - b == count * esize else {
                throw ModelError.invalidTensor(
                    path: path, tensor: name, reason: "holds \(end - b) bytes but shape \(shape) of \(dt) needs \(count * esize)")
            }
            entries[name] = SafetensorsEntry(name: name, dtypeName: dt, shape: shape, range: (dataStart + b)..<(dataStart + end))
        }
        let sorted = entries.values.filter { !$0.range.isEmpty }.sorted { $0.range.lowerBound < $1.range.lowerBound }
        for (a, b) in zip(sorted, sorted.dropFirst()) where a.range.upperBound > b.range.lowerBound {
            throw ModelError.invalidTensor(path: path, tensor: b.name, reason: "overlaps tensor \(a.name)")
        }
        self.entries = entries
        self.metadata = meta
    }

    private static func integer(_ v: Any) -> Int? {
        if let n = v as? NSNumber {
            // Reject fractions; every other value is range-checked by the caller.
            let d = n.doubleValue
            guard d == d.rounded(), abs(d) < 9e15 else { return nil }
            return n.intValue
        }
        return nil
    }

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
