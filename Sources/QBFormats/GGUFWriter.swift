import Foundation
import QBSupport

/// Writes GGUF version 3 files: metadata in the order given, tensors aligned to 32 bytes,
/// each tensor's bytes produced on demand so a large model streams through memory.
public struct GGUFWriter {
    public struct Tensor {
        public let name: String
        /// GGUF order: row width first.
        public let dims: [Int]
        public let type: Int32
        /// Fills exactly the tensor's bytes.
        public let fill: (UnsafeMutableRawBufferPointer) throws -> Void

        public init(name: String, dims: [Int], type: Int32, fill: @escaping (UnsafeMutableRawBufferPointer) throws -> Void) {
            self.name = name
            self.dims = dims
            self.type = type
            self.fill = fill
        }

        public var byteCount: Int {
            let n = dims.reduce(1, *)
            guard type >= 0, let (bs, bb) = GGMLBlock.layout(ofType: UInt32(type)) else { return 0 }
            return n / bs * bb
        }
    }

    public var metadata: [(String, GGUFValue)] = []
    public var tensors: [Tensor] = []
    public let alignment = 32

    public init() {}

    public mutating func add(_ key: String, _ value: GGUFValue) { metadata.append((key, value)) }

    /// Writes the file atomically (a temporary file renamed into place).
    public func write(to url: URL) throws {
        try AtomicWriter.produce(at: url) { tmp in
            _ = FileManager.default.createFile(atPath: tmp.path, contents: nil)
            guard let out = FileHandle(forWritingAtPath: tmp.path) else {
                throw ModelError.unreadable(path: tmp.path, reason: "cannot create file")
            }
            defer { try? out.close() }
            var header = Data()
            header.append(le: GGUFFile.magic)
            header.append(le: UInt32(3))
            header.append(le: UInt64(tensors.count))
            header.append(le: UInt64(metadata.count))
            for (key, value) in metadata {
                header.appendString(key)
                header.append(le: value.type.rawValue)
                header.appendValue(value)
            }
            var offset = 0
            for t in tensors {
                header.appendString(t.name)
                header.append(le: UInt32(t.dims.count))
                for d in t.dims { header.append(le: UInt64(d)) }
                header.append(le: UInt32(bitPattern: t.type))
                header.append(le: UInt64(offset))
                offset += (t.byteCount + alignment - 1) / alignment * alignment
            }
            header.append(Data(count: (alignment - header.count % alignment) % alignment))
            try out.write(contentsOf: header)
            LongWork.begin("writing \(url.lastPathComponent)", total: offset)
            defer { LongWork.end() }
            for t in tensors {
                try LongWork.checkpoint()
                let n = t.byteCount
                let padded = (n + alignment - 1) / alignment * alignment
                let buf = UnsafeMutableRawBufferPointer.allocate(byteCount: max(padded, 1), alignment: 64)
                defer { buf.deallocate() }
                buf.initializeMemory(as: UInt8.self, repeating: 0)
                try t.fill(UnsafeMutableRawBufferPointer(rebasing: buf[0..<n]))
                try out.write(contentsOf: Data(bytesNoCopy: buf.baseAddress!, count: padded, deallocator: .none))
                try LongWork.advance(padded)
            }
        }
    }
}

extension Data {
    mutating func append<T: FixedWidthInteger>(le v: T) {
        Swift.withUnsafeBytes(of: v.littleEndian) { append(contentsOf: $0) }
    }

    mutating func appendString(_ s: String) {
        append(le: UInt64(s.utf8.count))
        append(contentsOf: Array(s.utf8))
    }

    mutating func appendValue(_ v: GGUFValue) {
        switch v {
        case .uint8(let x): append(le: x)
        case .int8(let x): append(le: x)
        case .uint16(let x): append(le: x)
        case .int16(let x): append(le: x)
        case .uint32(let x): append(le: x)
        case .int32(let x): append(le: x)
        case .float32(let x): append(le: x.bitPattern)
        case .bool(let x): append(le: UInt8(x ? 1 : 0))
        case .string(let s): appendString(s)
        case .uint64(let x): append(le: x)
        case .int64(let x): append(le: x)
        case .float64(let x): append(le: x.bitPattern)
        case .array(let values):
            append(le: values.elementType.rawValue)
            append(le: UInt64(values.count))
            for e in values { appendValue(e) }
        }
    }
}
