import Foundation
import QBKernels
import XCTest

/// Runs `body` once per kernel set this CPU runs, lowest first, with that set active and its
/// name printed, then puts back the set that was active before. One binary carries every
/// set and picks one at start-up, so each fast kernel is held against its reference on each
/// set the machine can execute, not only on the one it would pick. `QB_KERNELS`, when it
/// names a set this CPU runs, narrows the loop to that set (to replay one). XCTest runs a
/// process's tests one at a time, so switching the process-wide set here races nothing.
public func forEachKernelSet(_ test: String, _ body: (KernelSet) throws -> Void) rethrows {
    let before = KernelSet.active
    defer { KernelSet.use(before) }
    var sets = KernelSet.supported
    if let asked = ProcessInfo.processInfo.environment[KernelSet.environmentVariable].flatMap(KernelSet.init(name:)),
       sets.contains(asked) {
        sets = [asked]
    }
    for set in sets {
        guard KernelSet.use(set) else { continue }
        print("\(test) kernel set \(set.name) (replay this set alone: \(KernelSet.environmentVariable)=\(set.name))")
        try body(set)
    }
}

extension SeededGenerator {
    /// Back to the start of the stream: each kernel set's pass of a test draws the same
    /// inputs, so a failure on one set replays with that set alone.
    public mutating func restart() { self = SeededGenerator(seed: seed) }
}

/// A test case that draws its inputs from one seeded stream, `rng`.
public protocol SeededKernelTestCase: XCTestCase {
    var rng: SeededGenerator { get set }
}

extension SeededKernelTestCase {
    /// The test's body once per kernel set this CPU runs (`forEachKernelSet`), each pass
    /// drawing the same inputs from the test's seed.
    public func onEveryKernelSet(_ body: () throws -> Void) rethrows {
        try forEachKernelSet(name) { _ in
            rng.restart()
            try body()
        }
    }
}
