import Foundation
import QBFormats
import QBKernels
import QBSupport

// Safetensors writing in the kernels' element types: values are produced in f32 and
// narrowed with the kernels' conversions.
extension SafetensorsWriter {
    /// A tensor to write: its values come as f32 and are stored as `dtype`.
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
        try stream(path: path, tensors: raw, metadata: metadata, progressPerTensor: false) { index, out in
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
                try LongWork.advance(n * d.dtype.size)
            }
        }
    }
}
