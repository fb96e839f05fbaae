import Foundation

/// The elements of a GGUF metadata array, kept in their file form and decoded on access.
///
/// An array read from a file is not copied: numbers and bools are read from the mapped file
/// where they lie, strings too, with a 4-byte end offset per string so element `i` is found
/// at once. So a hostile header of ten million empty strings (8 bytes each in the file)
/// costs 4 bytes an element beyond the mapping instead of a 24-byte `GGUFValue`, and twenty
/// million int32 cost nothing beyond it. Arrays built in code are serialized the same way
/// into a buffer of their own. Only nested arrays, and arrays built in code whose elements
/// do not all have the declared type, keep `GGUFValue`s.
public struct GGUFArray: RandomAccessCollection, Sendable, Equatable {
    /// The element type the file declares (or the writer will declare).
    public let elementType: GGUFValueType
    let storage: Storage

    enum Storage: Sendable {
        /// Fixed-width elements, little-endian, `elementType.width` bytes each.
        case raw(GGUFBytes)
        case strings(GGUFStringTable)
        case values([GGUFValue])
    }

    init(elementType: GGUFValueType, storage: Storage) {
        self.elementType = elementType
        self.storage = storage
    }

    /// An array of `values` declared as `elementType`, serialized when every value has that type.
    public init(_ elementType: GGUFValueType, _ values: [GGUFValue]) {
        self.elementType = elementType
        if values.allSatisfy({ $0.type == elementType }) {
            if let width = elementType.width {
                var bytes: [UInt8] = []
                bytes.reserveCapacity(values.count * width)
                for v in values { v.appendFixedWidth(to: &bytes) }
                storage = .raw(GGUFBytes(bytes))
                return
            }
            if elementType == .string {
                var bytes: [UInt8] = []
                var ends: [UInt32] = []
                ends.reserveCapacity(values.count)
                for v in values {
                    let utf8 = (v.string ?? "").utf8
                    withUnsafeBytes(of: UInt64(utf8.count).littleEndian) { bytes.append(contentsOf: $0) }
                    bytes.append(contentsOf: utf8)
                    ends.append(UInt32(truncatingIfNeeded: bytes.count))
                }
                storage = .strings(GGUFStringTable(bytes: GGUFBytes(bytes), ends: ends))
                return
            }
        }
        storage = .values(values)
    }

    public var startIndex: Int { 0 }

    public var endIndex: Int {
        switch storage {
        case .raw(let bytes): return bytes.count / (elementType.width ?? 1)
        case .strings(let table): return table.ends.count
        case .values(let values): return values.count
        }
    }

    public subscript(i: Int) -> GGUFValue {
        switch storage {
        case .raw(let bytes):
            let width = elementType.width ?? 1
            precondition(i >= 0 && i < bytes.count / width, "GGUFArray index out of range")
            return GGUFValue.decodeFixedWidth(elementType, from: bytes.start, at: i * width)
        case .strings(let table): return .string(table[i])
        case .values(let values): return values[i]
        }
    }

    public static func == (a: GGUFArray, b: GGUFArray) -> Bool {
        guard a.elementType == b.elementType, a.count == b.count else { return false }
        switch (a.storage, b.storage) {
        // Bitwise, so a NaN read back equals itself; strings are serialized one way only.
        case (.raw(let x), .raw(let y)): return x == y
        case (.strings(let x), .strings(let y)): return x.bytes == y.bytes
        default: return zip(a, b).allSatisfy { $0 == $1 }
        }
    }
}

/// Bytes an array reads from: a region of a mapped file (kept mapped while the array
/// lives), or a buffer of its own for an array built in code. Never written after `init`,
/// which is what makes sharing it across threads safe.
final class GGUFBytes: @unchecked Sendable, Equatable {
    private let file: MappedFile?
    private let buffer: UnsafeMutableRawPointer?
    let start: UnsafeRawPointer
    let count: Int

    /// `count` bytes at `offset` in `file`; the caller has checked they lie inside it.
    init(file: MappedFile, offset: Int, count: Int) {
        self.file = file
        self.buffer = nil
        self.start = file.base + offset
        self.count = count
    }

    init(_ bytes: [UInt8]) {
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: max(bytes.count, 1), alignment: 8)
        bytes.withUnsafeBytes { if let b = $0.baseAddress { buffer.copyMemory(from: b, byteCount: $0.count) } }
        self.file = nil
        self.buffer = buffer
        self.start = UnsafeRawPointer(buffer)
        self.count = bytes.count
    }

    deinit { buffer?.deallocate() }

    static func == (a: GGUFBytes, b: GGUFBytes) -> Bool {
        a.count == b.count && memcmp(a.start, b.start, a.count) == 0
    }
}

/// Strings of one metadata array in their file form (an 8-byte length, then the UTF-8
/// bytes, for each) and where each one's bytes end, relative to the first length.
final class GGUFStringTable: Sendable {
    let bytes: GGUFBytes
    let ends: [UInt32]

    init(bytes: GGUFBytes, ends: [UInt32]) {
        self.bytes = bytes
        self.ends = ends
    }

    subscript(i: Int) -> String {
        let start = (i == 0 ? 0 : Int(ends[i - 1])) + 8
        let end = Int(ends[i])
        return String(decoding: UnsafeRawBufferPointer(start: bytes.start + start, count: end - start), as: UTF8.self)
    }
}

extension GGUFValueType {
    /// Bytes of one element in a file, for fixed-width types.
    public var width: Int? {
        switch self {
        case .uint8, .int8, .bool: return 1
        case .uint16, .int16: return 2
        case .uint32, .int32, .float32: return 4
        case .uint64, .int64, .float64: return 8
        case .string, .array: return nil
        }
    }
}

extension GGUFValue {
    /// A fixed-width value of `type` from its little-endian bytes at `offset` (in range).
    static func decodeFixedWidth(_ type: GGUFValueType, from b: UnsafeRawPointer, at offset: Int) -> GGUFValue {
        func le<T: FixedWidthInteger>(_: T.Type) -> T { T(littleEndian: b.loadUnaligned(fromByteOffset: offset, as: T.self)) }
        switch type {
        case .uint8: return .uint8(le(UInt8.self))
        case .int8: return .int8(le(Int8.self))
        case .uint16: return .uint16(le(UInt16.self))
        case .int16: return .int16(le(Int16.self))
        case .uint32: return .uint32(le(UInt32.self))
        case .int32: return .int32(le(Int32.self))
        case .float32: return .float32(Float(bitPattern: le(UInt32.self)))
        case .bool: return .bool(le(UInt8.self) != 0)
        case .uint64: return .uint64(le(UInt64.self))
        case .int64: return .int64(le(Int64.self))
        case .float64: return .float64(Double(bitPattern: le(UInt64.self)))
        case .string, .array: return .bool(false)  // not fixed-width; never stored raw
        }
    }

    /// Appends a fixed-width value's little-endian bytes (nothing for strings and arrays).
    func appendFixedWidth(to bytes: inout [UInt8]) {
        func le<T: FixedWidthInteger>(_ v: T) { withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) } }
        switch self {
        case .uint8(let x): le(x)
        case .int8(let x): le(x)
        case .uint16(let x): le(x)
        case .int16(let x): le(x)
        case .uint32(let x): le(x)
        case .int32(let x): le(x)
        case .float32(let x): le(x.bitPattern)
        case .bool(let x): le(UInt8(x ? 1 : 0))
        case .uint64(let x): le(x)
        case .int64(let x): le(x)
        case .float64(let x): le(x.bitPattern)
        case .string, .array: break
        }
    }
}
