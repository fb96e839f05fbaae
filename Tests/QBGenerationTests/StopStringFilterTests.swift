import XCTest
@testable import QBGeneration

final class StopStringFilterTests: XCTestCase {
    func testCutsAtAStopStringSplitAcrossPieces() {
        var f = StopStringFilter(["world"])
        XCTAssertEqual(f.push("Hello wo"), "Hello ", "a possible start is held back")
        XCTAssertEqual(f.push("rld! and more"), "", "the stop string and what follows never come out")
        XCTAssertEqual(f.matched, "world")
        XCTAssertEqual(f.push("later"), "")
        XCTAssertEqual(f.flush(), "")
    }

    func testReleasesHeldTextWhenItStopsMatching() {
        var f = StopStringFilter(["world"])
        XCTAssertEqual(f.push("a w"), "a ")
        XCTAssertEqual(f.push("o"), "")
        XCTAssertEqual(f.push("rm"), "worm")
        XCTAssertEqual(f.push("wor"), "")
        XCTAssertNil(f.matched)
        XCTAssertEqual(f.flush(), "wor", "at the end held text is shown")
    }

    func testEarliestMatchWinsThenTheShorter() {
        var f = StopStringFilter(["cd", "bc", "b"])
        XCTAssertEqual(f.push("abcd"), "a")
        XCTAssertEqual(f.matched, "b")
        var g = StopStringFilter(["xyz", "yz"])
        XCTAssertEqual(g.push("__xy"), "__")
        XCTAssertEqual(g.push("z"), "")
        XCTAssertEqual(g.matched, "xyz")
    }

    func testMatchesWithinOnePieceAndOnCharacterBoundaries() {
        var f = StopStringFilter(["é!"])
        XCTAssertEqual(f.push("café"), "caf")
        XCTAssertEqual(f.push("!"), "")
        XCTAssertEqual(f.matched, "é!")
        var g = StopStringFilter(["\n\n"])
        XCTAssertEqual(g.push("one\ntwo\n\nthree"), "one\ntwo")
        var h = StopStringFilter(["😀x"])
        XCTAssertEqual(h.push("a😀"), "a")
        XCTAssertEqual(h.push("y"), "😀y")
    }

    func testNoStopsPassThrough() {
        var f = StopStringFilter([])
        XCTAssertEqual(f.push("anything"), "anything")
        var g = StopStringFilter([""])
        XCTAssertEqual(g.push("still"), "still", "empty stop strings are ignored")
        XCTAssertEqual(g.flush(), "")
    }
}
