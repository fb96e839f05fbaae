import Foundation
import QBSupport

/// Writes safetensors files tensor by tensor, so a model larger than memory can be
/// produced: the header is fixed first from the declared shapes, then each tensor's
/// data is streamed in order. Writing f32 values narrowed to a kernel dtype is QBModel's
/// `write(path:declarations:fill:)`.
public enum SafetensorsWriter {
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

    /// Writes the header, then calls `body(index, handle)` for each tensor in order, which
    /// must write exactly that tensor's `byteCount` bytes.
    public static func stream(
        path: String, tensors: [RawTensor], metadata: [String: String], progressPerTensor: Bool = true,
        body: (Int, FileHandle) throws -> Void
    ) throws {
        var parts: [String] = []
        if !metadata.isEmpty {
            let m = metadata.sorted { $0.key < $1.key }.map { "\(JSONWriter.quoted($0.key, escaping: .controls)):\(JSONWriter.quoted($0.value, escaping: .controls))" }
            parts.append("\"__metadata__\":{\(m.joined(separator: ","))}")
        }
        var offset = 0
        for t in tensors {
            parts.append(
                "\(JSONWriter.quoted(t.name, escaping: .controls)):{\"dtype\":\"\(t.dtypeName)\",\"shape\":[\(t.shape.map(String.init).joined(separator: ","))],\"data_offsets\":[\(offset),\(offset + t.byteCount)]}")
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
        // Progress (and the check for an interrupt) after every tensor, or, when the body
        // reports finer pieces itself, only at the start.
        LongWork.begin("writing \(LongWork.displayName(path))", total: offset)
        defer { LongWork.end() }
        for i in tensors.indices {
            try LongWork.checkpoint()
            try body(i, out)
            if progressPerTensor { try LongWork.advance(tensors[i].byteCount) }
        }
    }
}
