import XCTest
@testable import QBGeneration

final class Utf8StreamTests: XCTestCase {
    func testHoldsBackIncompleteCharacters() {
        var s = Utf8Stream()
        let bytes = Array("a€😀".utf8)  // 1 + 3 + 4 bytes
        var out = ""
        for b in bytes { out += s.push([b]) }
        XCTAssertEqual(out + s.flush(), "a€😀")
        var t = Utf8Stream()
        XCTAssertEqual(t.push([0xE2, 0x82]), "")
        XCTAssertEqual(t.push([0xAC, 0x41]), "€A")
        XCTAssertEqual(t.push([0xFF]), "\u{FFFD}")
        XCTAssertEqual(t.push([0xF0]), "")
        XCTAssertEqual(t.flush(), "\u{FFFD}")
    }
}
