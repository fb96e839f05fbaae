import Foundation
import QBKernels

/// Writes safetensors files tensor by tensor, so a model larger than memory can be
/// produced: the header is fixed first from the declared shapes, then each tensor's
/// data is streamed in order.
public enum SafetensorsWriter {
    public struct Declaration {
        public let name: String
        public let dtype: DType
        public let shape: [Int]
        public init(name: String, dtype: DType, shape: [Int]) {
            self.name = name
            self.dtype = dtype
            self.shape = shape
        }
    }

    /// A tensor of any safetensors dtype, filled with raw little-endian bytes.
    public struct RawTensor {
        public let name: String
        public let dtypeName: String
        public let shape: [Int]
        public let byteCount: Int
        public init(name: String, dtypeName: String, shape: [Int], byteCount: Int) {
            self.name = name
            self.dtypeName = dtypeName
            self.shape = shape
            self.byteCount = byteCount
        }
    }

    /// Writes `declarations` to `path`; `fill(declaration, chunkStart, chunk)` supplies each
    /// tensor's values in f32, in chunks, which are narrowed to the tensor's dtype.
    public static func write(
        path: String, declarations: [Declaration], metadata: [String: String] = ["format": "pt"],
        fill: (Declaration, Int, UnsafeMutableBufferPointer<Float>) -> Void
    ) throws {
        let raw = declarations.map {
            RawTensor(name: $0.name, dtypeName: $0.dtype.rawValue, shape: $0.shape, byteCount: $0.shape.reduce(1, *) * $0.dtype.size)
        }
        let chunk = 1 << 20
        let floats = UnsafeMutableBufferPointer<Float>.allocate(capacity: chunk)
        let narrow = UnsafeMutableBufferPointer<UInt16>.allocate(capacity: chunk)
        defer { floats.deallocate(); narrow.deallocate() }
        try stream(path: path, tensors: raw, metadata: metadata) { index, out in
            let d = declarations[index]
            let count = d.shape.reduce(1, *)
            var start = 0
            while start < count {
                let n = min(chunk, count - start)
                fill(d, start, UnsafeMutableBufferPointer(rebasing: floats[0..<n]))
                switch d.dtype {
                case .f32:
                    try out.write(contentsOf: Data(bytesNoCopy: floats.baseAddress!, count: n * 4, deallocator: .none))
                case .f16, .bf16:
                    if d.dtype == .f16 {
                        Convert.f32ToF16(floats.baseAddress!, narrow.baseAddress!, count: n)
                    } else {
                        Convert.f32ToBF16(floats.baseAddress!, narrow.baseAddress!, count: n)
                    }
                    try out.write(contentsOf: Data(bytesNoCopy: narrow.baseAddress!, count: n * 2, deallocator: .none))
                }
                start += n
            }
        }
    }

    /// Writes tensors whose bytes `fill(index, buffer)` produces whole, one at a time.
    public static func writeRaw(
        path: String, tensors: [RawTensor], metadata: [String: String] = ["format": "mlx"],
        fill: (Int, UnsafeMutableRawPointer) -> Void
    ) throws {
        try stream(path: path, tensors: tensors, metadata: metadata) { index, out in
            let n = tensors[index].byteCount
            let buf = UnsafeMutableRawPointer.allocate(byteCount: max(n, 1), alignment: 64)
            defer { buf.deallocate() }
            fill(index, buf)
            try out.write(contentsOf: Data(bytesNoCopy: buf, count: n, deallocator: .none))
        }
    }

    /// The header, then `body(index, handle)` for each tensor in order.
    static func stream(
        path: String, tensors: [RawTensor], metadata: [String: String],
        body: (Int, FileHandle) throws -> Void
    ) throws {
        var parts: [String] = []
        if !metadata.isEmpty {
            let m = metadata.sorted { $0.key < $1.key }.map { "\(jsonString($0.key)):\(jsonString($0.value))" }
            parts.append("\"__metadata__\":{\(m.joined(separator: ","))}")
        }
        var offset = 0
        for t in tensors {
            parts.append(
                "\(jsonString(t.name)):{\"dtype\":\"\(t.dtypeName)\",\"shape\":[\(t.shape.map(String.init).joined(separator: ","))],\"data_offsets\":[\(offset),\(offset + t.byteCount)]}")
            offset += t.byteCount
        }
        var header = "{" + parts.joined(separator: ",") + "}"
        // The data section starts 8-aligned, so every tensor of these dtypes is aligned.
        while (header.utf8.count + 8) % 8 != 0 { header += " " }

        _ = FileManager.default.createFile(atPath: path, contents: nil)
        guard let out = FileHandle(forWritingAtPath: path) else {
            throw ModelError.unreadable(path: path, reason: "cannot create file")
        }
        defer { try? out.close() }
        var len = UInt64(header.utf8.count).littleEndian
        try out.write(contentsOf: Data(bytes: &len, count: 8))
        try out.write(contentsOf: Data(header.utf8))
        for i in tensors.indices { try body(i, out) }
    }

    static func jsonString(_ s: String) -> String {
        var r = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": r += "\\\""
            case "\\": r += "\\\\"
            case _ where u.value < 0x20: r += String(format: "\\u%04x", u.value)
            default: r.unicodeScalars.append(u)
            }
        }
        return r + "\""
    }
}
