import XCTest
@testable import QBKernels

/// Asserts that `packed`, a repacked form of `plain`, holds its values (dequantized) and, for
/// each of `ranges` of rows, its stored blocks byte for byte, as writers read them back.
func assertHoldsPlainRows(
    _ packed: Matrix, _ plain: Matrix, ranges: [Range<Int>]? = nil, _ name: String,
    file: StaticString = #filePath, line: UInt = #line
) {
    XCTAssertEqual(packed.toFloats(), plain.toFloats(), "\(name): dequantized values", file: file, line: line)
    for range in ranges ?? [0..<plain.rows] {
        let n = range.count * plain.rowBytes
        var a = [UInt8](repeating: 0, count: n), b = [UInt8](repeating: 1, count: n)
        a.withUnsafeMutableBytes { if let p = $0.baseAddress { plain.storedRows(range, into: p) } }
        b.withUnsafeMutableBytes { if let p = $0.baseAddress { packed.storedRows(range, into: p) } }
        XCTAssertEqual(a, b, "\(name): stored blocks of rows \(range)", file: file, line: line)
    }
}
