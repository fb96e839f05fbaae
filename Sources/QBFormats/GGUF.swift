import Foundation

/// GGUF metadata value types (the ids are the format's).
public enum GGUFValueType: UInt32, Sendable {
    case uint8 = 0, int8 = 1, uint16 = 2, int16 = 3, uint32 = 4, int32 = 5, float32 = 6, bool = 7
    case string = 8, array = 9, uint64 = 10, int64 = 11, float64 = 12
}

/// A GGUF metadata value, keeping its stored type so a file can be written back as read.
public enum GGUFValue: Sendable, Equatable {
    case uint8(UInt8), int8(Int8), uint16(UInt16), int16(Int16), uint32(UInt32), int32(Int32)
    case float32(Float), bool(Bool), string(String), uint64(UInt64), int64(Int64), float64(Double)
    case array(GGUFArray)

    /// An array of `values` declared as `elementType`.
    public static func array(_ elementType: GGUFValueType, _ values: [GGUFValue]) -> GGUFValue {
        .array(GGUFArray(elementType, values))
    }

    public var type: GGUFValueType {
        switch self {
        case .uint8: return .uint8
        case .int8: return .int8
        case .uint16: return .uint16
        case .int16: return .int16
        case .uint32: return .uint32
        case .int32: return .int32
        case .float32: return .float32
        case .bool: return .bool
        case .string: return .string
        case .uint64: return .uint64
        case .int64: return .int64
        case .float64: return .float64
        case .array: return .array
        }
    }

    public var int: Int? {
        switch self {
        case .uint8(let v): return Int(v)
        case .int8(let v): return Int(v)
        case .uint16(let v): return Int(v)
        case .int16(let v): return Int(v)
        case .uint32(let v): return Int(v)
        case .int32(let v): return Int(v)
        case .uint64(let v): return v <= UInt64(Int.max) ? Int(v) : nil
        case .int64(let v): return Int(v)
        case .bool(let v): return v ? 1 : 0
        default: return nil
        }
    }

    public var double: Double? {
        switch self {
        case .float32(let v): return Double(v)
        case .float64(let v): return v
        default: return int.map(Double.init)
        }
    }

    public var string: String? { if case .string(let s) = self { return s } else { return nil } }
    public var array: GGUFArray? { if case .array(let a) = self { return a } else { return nil } }
}

/// One tensor of a GGUF file.
public struct GGUFTensor: Sendable {
    public let name: String
    /// Dimensions as GGUF stores them: innermost (the row width) first.
    public let dims: [Int]
    public let type: UInt32
    /// Absolute byte range in the file.
    public let range: Range<Int>

    public var elementCount: Int { dims.reduce(1, *) }
}

/// A GGUF (version 2 or 3) file, mapped, with metadata and tensor directory parsed and
/// checked against the file: every count plausible, every string and tensor inside the
/// file, data aligned, no two tensors overlapping.
public final class GGUFFile: @unchecked Sendable {
    public static let magic: UInt32 = 0x4655_4747  // "GGUF"
    public let file: MappedFile
    public let version: Int
    public let metadata: [String: GGUFValue]
    /// Metadata keys in file order (for writing back and for display).
    public let keys: [String]
    public let tensors: [GGUFTensor]
    public let tensorIndex: [String: Int]
    public let alignment: Int
    public let dataOffset: Int

    // No real file comes near these; larger claims are corrupt counts.
    static let maxTensors = 1 << 20
    static let maxKeys = 1 << 20
    static let maxDims = 4

    public convenience init(path: String) throws {
        try self.init(file: MappedFile(path: path))
    }

    public init(file: MappedFile) throws {
        self.file = file
        var r = Reader(file: file)
        let path = file.path
        let magic = try r.u32("magic")
        guard magic == Self.magic else { throw ModelError.badMagic(path: path, found: String(format: "0x%08x", magic)) }
        let version = Int(try r.u32("version"))
        guard version == 2 || version == 3 else { throw ModelError.unsupportedVersion(path: path, version: version) }
        self.version = version
        let tensorCount = try r.u64("tensor_count")
        let kvCount = try r.u64("metadata_kv_count")
        guard tensorCount <= UInt64(Self.maxTensors) else {
            throw ModelError.invalidField(path: path, field: "tensor_count", reason: "\(tensorCount) is absurd")
        }
        guard kvCount <= UInt64(Self.maxKeys) else {
            throw ModelError.invalidField(path: path, field: "metadata_kv_count", reason: "\(kvCount) is absurd")
        }
        var meta: [String: GGUFValue] = [:]
        var keys: [String] = []
        for i in 0..<Int(kvCount) {
            let key = try r.string("metadata key \(i)")
            let type = try r.u32("type of \(key)")
            meta[key] = try r.value(type: type, item: key, depth: 0)
            keys.append(key)
        }
        self.metadata = meta
        self.keys = keys

        var alignment = 32
        if let a = meta["general.alignment"] {
            guard let v = a.int, v > 0, v <= 1 << 16, v & (v - 1) == 0 else {
                throw ModelError.invalidField(path: path, field: "general.alignment", reason: "\(a) is not a power of two")
            }
            alignment = v
        }
        self.alignment = alignment

        struct Info { let name: String; let dims: [Int]; let type: UInt32; let offset: UInt64 }
        var infos: [Info] = []
        for i in 0..<Int(tensorCount) {
            let name = try r.string("tensor \(i) name")
            let n = try r.u32("dims of \(name)")
            guard n >= 1, n <= UInt32(Self.maxDims) else {
                throw ModelError.invalidTensor(path: path, tensor: name, reason: "\(n) dimensions")
            }
            var dims: [Int] = []
            for d in 0..<Int(n) {
                let v = try r.u64("dim \(d) of \(name)")
                guard v <= 1 << 40 else { throw ModelError.invalidTensor(path: path, tensor: name, reason: "dimension \(v) is absurd") }
                dims.append(Int(v))
            }
            infos.append(Info(name: name, dims: dims, type: try r.u32("type of \(name)"), offset: try r.u64("offset of \(name)")))
        }
        let dataOffset = (r.offset + alignment - 1) / alignment * alignment
        self.dataOffset = dataOffset

        var tensors: [GGUFTensor] = []
        var index: [String: Int] = [:]
        for info in infos {
            let (count, overflow) = info.dims.reduce((1, false)) { acc, d in
                let (p, o) = acc.0.multipliedReportingOverflow(by: d)
                return (p, acc.1 || o)
            }
            guard !overflow, count <= 1 << 40 else {
                throw ModelError.invalidTensor(path: path, tensor: info.name, reason: "shape \(info.dims) is absurdly large")
            }
            guard let (blockSize, blockBytes) = GGMLBlock.layout(ofType: info.type) else {
                throw ModelError.unsupportedDType(path: path, tensor: info.name, dtype: "GGML type \(info.type)")
            }
            guard info.dims[0] % blockSize == 0 else {
                throw ModelError.invalidTensor(
                    path: path, tensor: info.name, reason: "row width \(info.dims[0]) is not a multiple of the block size \(blockSize)")
            }
            guard info.offset % UInt64(alignment) == 0 else {
                throw ModelError.invalidTensor(path: path, tensor: info.name, reason: "data offset \(info.offset) is not aligned to \(alignment)")
            }
            let bytes = count / blockSize * blockBytes
            guard info.offset <= UInt64(file.size), Int(info.offset) <= file.size - dataOffset,
                  bytes <= file.size - dataOffset - Int(info.offset)
            else {
                throw ModelError.invalidTensor(
                    path: path, tensor: info.name, reason: "data (\(bytes) bytes at offset \(info.offset)) runs past the end of the file")
            }
            guard index[info.name] == nil else {
                throw ModelError.invalidTensor(path: path, tensor: info.name, reason: "appears twice")
            }
            let start = dataOffset + Int(info.offset)
            index[info.name] = tensors.count
            tensors.append(GGUFTensor(name: info.name, dims: info.dims, type: info.type, range: start..<(start + bytes)))
        }
        let sorted = tensors.filter { !$0.range.isEmpty }.sorted { $0.range.lowerBound < $1.range.lowerBound }
        for (a, b) in zip(sorted, sorted.dropFirst()) where a.range.upperBound > b.range.lowerBound {
            throw ModelError.invalidTensor(path: path, tensor: b.name, reason: "overlaps tensor \(a.name)")
        }
        self.tensors = tensors
        self.tensorIndex = index
        // The header was read once; metadata arrays read it again where they lie, on demand.
        file.dropPages(before: dataOffset)
    }

    public func tensor(_ name: String) -> GGUFTensor? { tensorIndex[name].map { tensors[$0] } }

    /// Reads the header fields in order, each access bounds-checked.
    struct Reader {
        let file: MappedFile
        var offset = 0
        /// Bytes the metadata takes once decoded (arrays, long strings), which may not pass
        /// three times the file's size plus 4 MB, checked before each array is allocated.
        /// Arrays are compact (`GGUFArray`), so only nested arrays (24 bytes an element, at
        /// least 12 in the file) and long single strings come near it.
        var decodedBytes = 0
        var decodedAllowance: Int { file.size.multipliedReportingOverflow(by: 3).partialValue &+ (4 << 20) }

        mutating func charge(_ bytes: Int, _ item: String) throws {
            decodedBytes = decodedBytes.addingReportingOverflow(bytes).partialValue
            guard decodedBytes >= 0, decodedBytes <= decodedAllowance else {
                throw ModelError.invalidField(
                    path: file.path, field: item,
                    reason: "metadata would take more than \(decodedAllowance) bytes in memory, over three times the file's size")
            }
        }

        mutating func u32(_ item: String) throws -> UInt32 {
            defer { offset += 4 }
            return try file.load(UInt32.self, at: offset, item: item)
        }

        mutating func u64(_ item: String) throws -> UInt64 {
            defer { offset += 8 }
            return try file.load(UInt64.self, at: offset, item: item)
        }

        mutating func string(_ item: String) throws -> String {
            let n = try u64("length of \(item)")
            guard n <= UInt64(file.size - offset) else {
                throw ModelError.invalidField(path: file.path, field: item, reason: "string length \(n) runs past the end of the file")
            }
            let bytes = try file.bytes(at: offset, count: Int(n), item: item)
            offset += Int(n)
            // Strings longer than 15 bytes are allocated, with a header.
            if n > 15 { try charge(Int(n) + 32, item) }
            return String(decoding: bytes, as: UTF8.self)
        }

        /// `count` strings where they lie in the file, with where each ends.
        mutating func strings(count: Int, item: String) throws -> GGUFStringTable {
            try charge(count * MemoryLayout<UInt32>.stride, item)
            let first = offset
            var ends: [UInt32] = []
            ends.reserveCapacity(count)
            for _ in 0..<count {
                let n = try u64("length of \(item)")
                guard n <= UInt64(file.size - offset) else {
                    throw ModelError.invalidField(path: file.path, field: item, reason: "string length \(n) runs past the end of the file")
                }
                offset += Int(n)
                guard let end = UInt32(exactly: offset - first) else {
                    throw ModelError.invalidField(path: file.path, field: item, reason: "strings of one array span more than 4 GiB")
                }
                ends.append(end)
            }
            return GGUFStringTable(bytes: GGUFBytes(file: file, offset: first, count: offset - first), ends: ends)
        }

        /// An array of arrays: the only kind kept as `GGUFValue`s (at least 12 bytes each in the file).
        mutating func nestedArrays(count: Int, item: String, depth: Int) throws -> GGUFArray {
            guard count.multipliedReportingOverflow(by: 12).partialValue <= file.size - offset, count <= file.size - offset else {
                throw ModelError.invalidField(path: file.path, field: item, reason: "array count \(count) runs past the end of the file")
            }
            try charge(count * MemoryLayout<GGUFValue>.stride, item)
            var values: [GGUFValue] = []
            values.reserveCapacity(count)
            for _ in 0..<count { values.append(try value(type: GGUFValueType.array.rawValue, item: item, depth: depth + 1)) }
            return GGUFArray(elementType: .array, storage: .values(values))
        }

        mutating func value(type raw: UInt32, item: String, depth: Int) throws -> GGUFValue {
            guard let type = GGUFValueType(rawValue: raw) else {
                throw ModelError.invalidField(path: file.path, field: item, reason: "unknown value type \(raw)")
            }
            func fixed<T: FixedWidthInteger>(_: T.Type) throws -> T {
                defer { offset += MemoryLayout<T>.size }
                return try file.load(T.self, at: offset, item: item)
            }
            switch type {
            case .uint8: return .uint8(try fixed(UInt8.self))
            case .int8: return .int8(try fixed(Int8.self))
            case .uint16: return .uint16(try fixed(UInt16.self))
            case .int16: return .int16(try fixed(Int16.self))
            case .uint32: return .uint32(try fixed(UInt32.self))
            case .int32: return .int32(try fixed(Int32.self))
            case .float32: return .float32(Float(bitPattern: try fixed(UInt32.self)))
            case .bool: return .bool(try fixed(UInt8.self) != 0)
            case .string: return .string(try string(item))
            case .uint64: return .uint64(try fixed(UInt64.self))
            case .int64: return .int64(try fixed(Int64.self))
            case .float64: return .float64(Double(bitPattern: try fixed(UInt64.self)))
            case .array:
                guard depth < 2 else { throw ModelError.invalidField(path: file.path, field: item, reason: "arrays nested too deep") }
                let elementRaw = try u32("element type of \(item)")
                let count = try u64("count of \(item)")
                // Every element takes at least one byte: a larger count is a corrupt field.
                guard count <= UInt64(file.size - offset) else {
                    throw ModelError.invalidField(path: file.path, field: item, reason: "array count \(count) runs past the end of the file")
                }
                guard let elementType = GGUFValueType(rawValue: elementRaw) else {
                    throw ModelError.invalidField(path: file.path, field: item, reason: "unknown array element type \(elementRaw)")
                }
                guard let width = elementType.width ?? (elementType == .string ? 8 : nil) else {
                    return .array(try nestedArrays(count: Int(count), item: item, depth: depth))
                }
                // The smallest an element can be in the file: the count must fit what is left.
                let (inFile, overflow) = Int(count).multipliedReportingOverflow(by: width)
                guard !overflow, inFile <= file.size - offset else {
                    throw ModelError.invalidField(
                        path: file.path, field: item, reason: "array count \(count) runs past the end of the file")
                }
                if elementType == .string { return .array(GGUFArray(elementType: .string, storage: .strings(try strings(count: Int(count), item: item)))) }
                let bytes = GGUFBytes(file: file, offset: offset, count: inFile)
                offset += inFile
                return .array(GGUFArray(elementType: elementType, storage: .raw(bytes)))
            }
        }
    }
}
