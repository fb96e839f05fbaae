import XCTest
@testable import QBText
final class ProbeTests: XCTestCase {
    func testProbe() {
        let t = SyntheticCorpus.text
        print("size", t.utf8.count, "prose", SyntheticCorpus.prose.utf8.count)
        for f in [1, 2, 3] { print("minfreq", f, BPETrainer.train(text: t, maxMerges: .max, minimumFrequency: f).merges.count) }
        print(String(t.suffix(1500)))
    }
}
