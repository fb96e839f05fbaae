import XCTest
import QBModel

/// `general.file_type` names as llama.cpp's `llama_ftype_name` prints them.
final class GGUFFileTypeTests: XCTestCase {
    func testNamesAsLlamaCpp() {
        XCTAssertEqual(GGUFFileType.name(15), "Q4_K - Medium")
        XCTAssertEqual(GGUFFileType.name(7), "Q8_0")
        XCTAssertEqual(GGUFFileType.name(0), "all F32")
        XCTAssertEqual(GGUFFileType.name(1024 | 2), "(guessed) Q4_0")
        XCTAssertEqual(GGUFFileType.name(999), "unknown, may not work")
        XCTAssertEqual(GGUFFileType.name(-1), "unknown, may not work")
    }
}
