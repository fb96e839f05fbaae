// swift-tools-version: 6.1
import PackageDescription

// Hot loops must be compiled for the CPU they run on (AVX2/FMA, AVX-512 and VNNI where
// present), in debug builds too: the tests run the real kernels on real models.
let nativeC: [CSetting] = [.unsafeFlags(["-O3", "-march=native", "-ffp-contract=on"])]
let nativeSwift: [SwiftSetting] = [.unsafeFlags(["-Xcc", "-march=native"])]

let package = Package(
    name: "QuantBench",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "quantbench", targets: ["quantbench"]),
        .library(name: "QBKernels", targets: ["QBKernels"]),
        .library(name: "QBModel", targets: ["QBModel"]),
        .library(name: "QBGeneration", targets: ["QBGeneration"]),
        .library(name: "QBRunner", targets: ["QBRunner"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "5.0.1"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.0.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.5.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.0.0"),
    ],
    targets: [
        // System libraries.
        .systemLibrary(
            name: "CBLAS", path: "Sources/CBLAS", pkgConfig: "openblas",
            providers: [.apt(["libopenblas-dev"])]),
        .systemLibrary(
            name: "CTCMalloc", path: "Sources/CTCMalloc", pkgConfig: "libtcmalloc",
            providers: [.apt(["libgoogle-perftools-dev"])]),

        // Layer 0: what every layer shares (JSON, seeded generators, atomic files, the
        // cancellation flag, quantiles). Depends on nothing.
        .target(name: "QBSupport", swiftSettings: nativeSwift),

        // Layer 1: kernels. C holds only what needs intrinsics or a spinning thread pool;
        // every C kernel has a plain Swift reference in QBKernels.
        .target(name: "CQBKernels", path: "Sources/CQBKernels", cSettings: nativeC),
        .target(
            name: "QBKernels",
            dependencies: ["CQBKernels", "CBLAS"],
            swiftSettings: nativeSwift),

        // Layer 2: model files (GGUF, safetensors) read and written without the kernels.
        .target(name: "QBFormats", dependencies: ["QBSupport"], swiftSettings: nativeSwift),

        // Layer 3: configs, forward pass, quantize-at-load, synthetic models.
        .target(name: "QBModel", dependencies: ["QBKernels", "QBFormats", "QBSupport"], swiftSettings: nativeSwift),

        // Layer 2 too: the Jinja engine that chat templates are written in.
        .target(name: "QBJinja", dependencies: ["QBSupport"], swiftSettings: nativeSwift),

        // Layer 3 too, beside QBModel: tokenizers, detokenizer, chat templates.
        .target(
            name: "QBText",
            dependencies: ["QBFormats", "QBJinja", "QBSupport", .product(name: "HeapModule", package: "swift-collections")],
            swiftSettings: nativeSwift),

        // Layer 4: sampling and the token stream.
        .target(name: "QBGeneration", dependencies: ["QBModel", "QBText"], swiftSettings: nativeSwift),

        // Layer 5: suites, metrics, reports.
        .target(
            name: "QBRunner",
            dependencies: ["QBGeneration", "CTCMalloc", .product(name: "Yams", package: "Yams")],
            swiftSettings: nativeSwift),

        // Layer 6: the OpenAI-compatible HTTP server (batched decode, admission, metrics).
        .target(
            name: "QBServe",
            dependencies: [
                "QBRunner", .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: nativeSwift),

        // Layer 7: the command line.
        .executableTarget(
            name: "quantbench",
            dependencies: [
                "QBRunner",
                "QBServe",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: nativeSwift,
            linkerSettings: [.linkedLibrary("tcmalloc")]),

        .testTarget(name: "QBKernelsTests", dependencies: ["QBKernels"], swiftSettings: nativeSwift),
        .testTarget(name: "QBModelTests", dependencies: ["QBModel", "QBText", "QBFormats", "QBSupport"], swiftSettings: nativeSwift),
        .testTarget(
            name: "QBTextTests", dependencies: ["QBText", "QBJinja", "QBFormats", "QBSupport"], exclude: ["oracles"],
            swiftSettings: nativeSwift),
        .testTarget(
            name: "QBGenerationTests", dependencies: ["QBGeneration", "QBRunner", "QBSupport"], swiftSettings: nativeSwift),
        .testTarget(name: "QBRunnerTests", dependencies: ["QBRunner", "QBJinja", "QBSupport"], swiftSettings: nativeSwift),
        .testTarget(name: "CLITests", dependencies: ["quantbench"], swiftSettings: nativeSwift),
        .testTarget(
            name: "QBServeTests", dependencies: ["QBServe", "QBRunner", "QBGeneration", "QBSupport", "quantbench"], exclude: ["oracles"],
            swiftSettings: nativeSwift),
        .testTarget(
            name: "QBOracleTests", dependencies: ["QBModel", "QBText", "QBGeneration", "QBRunner", "QBFormats", "QBSupport"], exclude: ["oracles"],
            swiftSettings: nativeSwift),
    ],
    swiftLanguageModes: [.v6]
)
