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
    ],
    targets: [
        // System libraries.
        .systemLibrary(
            name: "CBLAS", path: "Sources/CBLAS", pkgConfig: "openblas",
            providers: [.apt(["libopenblas-dev"])]),
        .systemLibrary(
            name: "CTCMalloc", path: "Sources/CTCMalloc", pkgConfig: "libtcmalloc",
            providers: [.apt(["libgoogle-perftools-dev"])]),

        // Layer 1: kernels. C holds only what needs intrinsics or a spinning thread pool;
        // every C kernel has a plain Swift reference in QBKernels.
        .target(name: "CQBKernels", path: "Sources/CQBKernels", cSettings: nativeC),
        .target(
            name: "QBKernels",
            dependencies: ["CQBKernels", "CBLAS"],
            swiftSettings: nativeSwift),

        // Layer 2: model formats, configs, forward pass, synthetic models.
        .target(name: "QBModel", dependencies: ["QBKernels"], swiftSettings: nativeSwift),

        // Layer 3: tokenizers, detokenizer, chat templates.
        .target(name: "QBText", dependencies: ["QBModel"], swiftSettings: nativeSwift),

        // Layer 4: sampling and the token stream.
        .target(name: "QBGeneration", dependencies: ["QBModel", "QBText"], swiftSettings: nativeSwift),

        // Layer 5: suites, metrics, reports.
        .target(
            name: "QBRunner",
            dependencies: ["QBGeneration", "CTCMalloc", .product(name: "Yams", package: "Yams")],
            swiftSettings: nativeSwift,
            plugins: ["BuildInfoPlugin"]),

        // The commit (and whether the tree was dirty) compiled into the binary: `--version`
        // and every result's `environment.commit`.
        .plugin(name: "BuildInfoPlugin", capability: .buildTool(), path: "Plugins/BuildInfoPlugin"),

        // Layer 6: the command line.
        .executableTarget(
            name: "quantbench",
            dependencies: [
                "QBRunner",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: nativeSwift,
            linkerSettings: [.linkedLibrary("tcmalloc")]),

        .testTarget(name: "QBKernelsTests", dependencies: ["QBKernels"], swiftSettings: nativeSwift),
        .testTarget(name: "QBModelTests", dependencies: ["QBModel", "QBText"], swiftSettings: nativeSwift),
        .testTarget(name: "QBTextTests", dependencies: ["QBText"], exclude: ["oracles"], swiftSettings: nativeSwift),
        .testTarget(
            name: "QBGenerationTests", dependencies: ["QBGeneration", "QBRunner"], swiftSettings: nativeSwift),
        .testTarget(name: "QBRunnerTests", dependencies: ["QBRunner"], swiftSettings: nativeSwift),
        .testTarget(name: "CLITests", dependencies: ["quantbench"], swiftSettings: nativeSwift),
        .testTarget(
            name: "QBOracleTests", dependencies: ["QBModel", "QBText", "QBGeneration", "QBRunner"], exclude: ["oracles"],
            swiftSettings: nativeSwift),
    ],
    swiftLanguageModes: [.v6]
)
