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
        .library(name: "QBHistory", targets: ["QBHistory"]),
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
        .systemLibrary(
            name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(
            name: "CLibPQ", path: "Sources/CLibPQ", pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]),

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
            swiftSettings: nativeSwift,
            plugins: ["BuildInfoPlugin"]),

        // The commit (and whether the tree was dirty) compiled into the binary: `--version`
        // and every result's `environment.commit`.
        .plugin(name: "BuildInfoPlugin", capability: .buildTool(), path: "Plugins/BuildInfoPlugin"),

        // Beside layer 5: the results history (SQLite by default, PostgreSQL for a team),
        // change points over it.
        .target(name: "QBHistory", dependencies: ["QBRunner", "QBSupport", "CSQLite", "CLibPQ"], swiftSettings: nativeSwift),

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
                "QBHistory",
                "QBServe",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: nativeSwift,
            linkerSettings: [.linkedLibrary("tcmalloc")]),

        // Shared by every test target: fixture paths, seeded random inputs, the Python
        // oracle runner, the test models.
        .target(
            name: "QBTestSupport", dependencies: ["QBRunner", "QBModel", "QBText"], path: "Tests/QBTestSupport",
            swiftSettings: nativeSwift),

        .testTarget(name: "QBKernelsTests", dependencies: ["QBKernels", "QBTestSupport"], swiftSettings: nativeSwift),
        .testTarget(name: "QBModelTests", dependencies: ["QBModel", "QBText", "QBFormats", "QBSupport", "QBTestSupport"], swiftSettings: nativeSwift),
        .testTarget(
            name: "QBTextTests", dependencies: ["QBText", "QBJinja", "QBFormats", "QBSupport", "QBTestSupport"], exclude: ["oracles"],
            swiftSettings: nativeSwift),
        .testTarget(
            name: "QBHistoryTests", dependencies: ["QBHistory", "QBRunner", "QBTestSupport"], exclude: ["oracles"],
            swiftSettings: nativeSwift),
        .testTarget(
            name: "QBGenerationTests", dependencies: ["QBGeneration", "QBRunner", "QBSupport", "QBTestSupport"], swiftSettings: nativeSwift),
        .testTarget(name: "QBRunnerTests", dependencies: ["QBRunner", "QBJinja", "QBSupport", "QBTestSupport"], swiftSettings: nativeSwift),
        .testTarget(name: "CLITests", dependencies: ["quantbench", "QBHistory", "QBRunner", "QBTestSupport"], swiftSettings: nativeSwift),
        .testTarget(
            name: "QBServeTests", dependencies: ["QBServe", "QBRunner", "QBGeneration", "QBSupport", "quantbench", "QBTestSupport"], exclude: ["oracles"],
            swiftSettings: nativeSwift),
        .testTarget(
            name: "QBOracleTests", dependencies: ["QBModel", "QBText", "QBGeneration", "QBRunner", "QBFormats", "QBSupport", "QBTestSupport"], exclude: ["oracles"],
            swiftSettings: nativeSwift),
    ],
    swiftLanguageModes: [.v6]
)
