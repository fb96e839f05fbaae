import Foundation
import QBKernels

/// Writes a safetensors file tensor by tensor, so a model larger than memory can be
/// produced: the header is fixed first from the declared shapes, then each tensor's
/// data is streamed in order.
public struct SafetensorsWriter {
    public struct Declaration {
        public let name: String
        public let dtype: DType
        public let shape: [Int]
        public init(name: String, dtype: DType, shape: [Int]) {
            self.name = name
            self.dtype = dtype
            self.shape = shape
        }
        var bytes: Int { shape.reduce(1, *) * dtype.size }
    }

    /// Writes `declarations` to `path`; `fill(declaration, chunkStart, chunk)` supplies each
    /// tensor's values in f32, in chunks, which are narrowed to the tensor's dtype.
    public static func write(
        path: String, declarations: [Declaration], metadata: [String: String] = ["format": "pt"],
        fill: (Declaration, Int, UnsafeMutableBufferPointer<Float>) -> Void
    ) throws {
        var header = "{"
        var offset = 0
        var parts: [String] = []
        if !metadata.isEmpty {
            let m = metadata.sorted { $0.key < $1.key }.map { "\(jsonString($0.key)):\(jsonString($0.value))" }
            parts.append("\"__metadata__\":{\(m.joined(separator: ","))}")
        }
        for d in declarations {
            parts.append(
                "\(jsonString(d.name)):{\"dtype\":\"\(d.dtype.rawValue)\",\"shape\":[\(d.shape.map(String.init).joined(separator: ","))],\"data_offsets\":[\(offset),\(offset + d.bytes)]}")
            offset += d.bytes
        }
        header += parts.joined(separator: ",") + "}"
        // The data section starts 8-aligned, so every tensor of these dtypes is aligned.
        while (header.utf8.count + 8) % 8 != 0 { header += " " }

        guard let out = FileHandle(forWritingAtPath: path) ?? {
            FileManager.default.createFile(atPath: path, contents: nil)
            return FileHandle(forWritingAtPath: path)
        }() else { throw ModelError.unreadable(path: path, reason: "cannot create file") }
        defer { try? out.close() }
        var len = UInt64(header.utf8.count).littleEndian
        try out.write(contentsOf: Data(bytes: &len, count: 8))
        try out.write(contentsOf: Data(header.utf8))

        let chunk = 1 << 20
        let floats = UnsafeMutableBufferPointer<Float>.allocate(capacity: chunk)
        let narrow = UnsafeMutableBufferPointer<UInt16>.allocate(capacity: chunk)
        defer { floats.deallocate(); narrow.deallocate() }
        for d in declarations {
            let count = d.shape.reduce(1, *)
            var start = 0
            while start < count {
                let n = min(chunk, count - start)
                let view = UnsafeMutableBufferPointer(rebasing: floats[0..<n])
                fill(d, start, view)
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
