// swift-tools-version: 6.1
// Kernel benchmarks (ordo-one/package-benchmark), kept in their own package so that the
// engine's build and tests do not pay for the benchmark tooling.
//   cd Benchmarks && swift package benchmark
import Foundation
import PackageDescription

// A path dependency's identity is its folder's name, which depends on where the clone lives.
let engine = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

let package = Package(
    name: "QuantBenchBenchmarks",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "Kernels",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "QBKernels", package: engine),
                .product(name: "QBModel", package: engine),
                .product(name: "QBGeneration", package: engine),
                .product(name: "QBRunner", package: engine),
                .product(name: "QBSupport", package: engine),
            ],
            path: "Kernels",
            swiftSettings: [.unsafeFlags(["-Ounchecked"])],
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]),
    ],
    swiftLanguageModes: [.v6]
)
