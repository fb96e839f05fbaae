import QBFormats
import QBKernels
import XCTest

/// QBFormats keeps its own table of GGML block layouts so GGUF files are checked and
/// written without the kernels; it must say exactly what the kernels' table says.
final class GGMLBlockTests: XCTestCase {
    func testFormatsAndKernelsAgreeOnEveryTypeID() {
        for id in Int32(0)..<256 {
            let kernels = (values: Int(WeightFormat.blockSize(ggmlID: id)), bytes: Int(WeightFormat.blockBytes(ggmlID: id)))
            let formats = GGMLBlock.layout(ofType: UInt32(id))
            XCTAssertEqual(formats?.values ?? 0, kernels.values, "type \(id)")
            XCTAssertEqual(formats?.bytes ?? 0, kernels.bytes, "type \(id)")
        }
    }
}
