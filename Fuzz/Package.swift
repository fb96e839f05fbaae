// swift-tools-version: 6.1
import PackageDescription

// libFuzzer targets for every parser of outside data, kept out of the main package so
// that its normal build is unaffected. Built by Fuzz/run.sh with
// `-sanitize=fuzzer,address` applied to every module (so the parsers are instrumented);
// one binary, the target chosen by QBFUZZ_TARGET.
let package = Package(
    name: "QuantBenchFuzz",
    dependencies: [.package(name: "QuantBench", path: "..")],
    targets: [
        .executableTarget(
            name: "qbfuzz",
            dependencies: [
                .product(name: "QBRunner", package: "QuantBench"), .product(name: "QBOpenAI", package: "QuantBench"),
            ],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]),
    ],
    swiftLanguageModes: [.v6]
)
