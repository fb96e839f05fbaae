import Foundation
import QBSupport

/// One tensor entry of a safetensors header.
public struct SafetensorsEntry: Sendable {
    public let name: String
    /// The dtype string as written (F32, BF16, I64, ...).
    public let dtypeName: String
    public let shape: [Int]
    /// Byte range inside the file (already offset past the header).
    public let range: Range<Int>
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
            try NestingDepth.checkJSON(raw)
        } catch {
            throw ModelError.invalidField(path: path, field: "JSON header", reason: error.description)
        }
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
}
