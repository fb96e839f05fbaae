import QBSupport
import XCTest
@testable import QBGeneration

/// The RNGs produce their reference implementations' streams. Expected values were
/// computed once with a direct Python port of the reference C code (Vigna's
/// xoshiro256starstar.c and splitmix64.c, llama2.c run.c's random_u32/random_f32), and the
/// first ones are also published: xoshiro256** from state {1, 2, 3, 4} is rand_xoshiro's
/// test vector, and SplitMix64 from 0 starts with 0xE220A8397B1DCDAF.
final class RandomTests: XCTestCase {
    func testXoshiro256StarStarMatchesTheReferenceVector() {
        var rng = Xoshiro256StarStar(state: (1, 2, 3, 4))
        let expected: [UInt64] = [
            11520, 0, 1_509_978_240, 1_215_971_899_390_074_240, 1_216_172_134_540_287_360,
            607_988_272_756_665_600, 16_172_922_978_634_559_625, 8_476_171_486_693_032_832,
            10_595_114_339_597_558_777, 2_904_607_092_377_533_576,
        ]
        XCTAssertEqual((0..<10).map { _ in rng.next() }, expected)
    }

    func testSplitMix64MatchesTheReference() {
        var mix = SplitMix64(state: 0)
        XCTAssertEqual((0..<3).map { _ in mix.next() }, [0xE220_A839_7B1D_CDAF, 0x6E78_9E6A_A1B9_65F4, 0x06C4_5D18_8009_454F])
    }

    func testSeedingIsSplitMixIntoXoshiro() {
        var zero = Xoshiro256StarStar(seed: 0)
        XCTAssertEqual(zero.state.0, 0xE220_A839_7B1D_CDAF)
        XCTAssertEqual(
            (0..<5).map { _ in zero.next() },
            [0x99EC_5F36_CB75_F2B4, 0xBF6E_1F78_4956_452A, 0x1A5F_849D_4933_E6E0, 0x6AA5_94F1_262D_2D2C, 0xBBA5_AD4A_1F84_2E59])
        var fortyTwo = Xoshiro256StarStar(seed: 42)
        XCTAssertEqual(
            (0..<5).map { _ in fortyTwo.next() },
            [0x1578_0B2E_0C2E_C716, 0x6104_D986_6D11_3A7E, 0xAE17_5332_39E4_99A1, 0xECB8_AD47_03B3_60A1, 0xFDE6_DC7F_E2EC_5E64])
    }

    func testUnitDoublesAreTheTop53Bits() {
        var a = Xoshiro256StarStar(seed: 42), b = Xoshiro256StarStar(seed: 42)
        XCTAssertEqual(a.nextUnitDouble(), Double(UInt64(0x1578_0B2E_0C2E_C716) >> 11) / 9_007_199_254_740_992)
        for _ in 0..<10_000 {
            let u = b.nextUnitDouble()
            XCTAssertTrue(u >= 0 && u < 1)
        }
        XCTAssertLessThan(Double(UInt64.max >> 11) * 0x1.0p-53, 1, "the largest output still maps below 1")
    }

    func testLlama2cRandomMatchesRunC() {
        var rng = Llama2cRandom(seed: 42)
        let expected: [UInt32] = [1_456_360_119, 3_359_763_283, 3_393_612_768, 4_054_632_243, 3_283_045_847]
        XCTAssertEqual((0..<5).map { _ in rng.nextUInt32() }, expected)
        var floats = Llama2cRandom(seed: 42)
        XCTAssertEqual(floats.nextFloat(), 0.3390852212905884)
        XCTAssertEqual(floats.nextFloat(), 0.7822558283805847)
    }
}
