import ArgumentParser
import QBKernels
import QBRunner

struct RooflineCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "roofline",
        abstract: "Measure this machine's read bandwidth and peak arithmetic (fp32 FMA, int8 dot) and store them.")

    @Option(help: "Threads for the all-threads figures (default: every core).")
    var threads: Int?

    @Option(help: "Runs per probe; the median is kept.")
    var repetitions: Int = 5

    func run() throws {
        let n = try ThreadCount.resolve(threads)
        guard repetitions >= 1, repetitions <= 1000 else { throw ValidationError("--repetitions must be between 1 and 1000") }
        let r = Roofline.measure(pool: ThreadPool(threads: n), repetitions: repetitions)
        try r.store()
        print("CPU: \(r.cpu), kernel set: \(r.kernelSet ?? KernelSet.active.name)")
        print(r.table)
        print("stored in \(Roofline.storeURL.path)")
    }
}
