// swift-tools-version: 6.1
import PackageDescription

// The kernels are compiled once per instruction set and chosen at start-up from the CPU
// (Sources/CQBKernels/qb_dispatch.c), so one binary runs on any x86-64 at the speed of a build
// for that CPU; nothing is compiled for the build machine (-march=native would make a
// binary that dies with SIGILL on a CPU older than the one it was built on). The C kernels
// are optimized in debug builds too: the tests run the real kernels on real models.
let kernelC = ["-O3", "-ffp-contract=on"]
// Flags per kernel set, only for x86-64 hosts (the manifest is evaluated on the build
// machine; elsewhere the x86 sets compile to nothing and only the portable set exists).
// AVX-512: x86-64-v4 plus VNNI (every intrinsic the sources' QB_AVX512 paths use), and
// 512-bit vectors for the loops the compiler vectorizes, as -march=native chose on Zen 4
// (generic tuning would stop at 256 bits).
#if arch(x86_64)
let avx512C = ["-march=x86-64-v4", "-mavx512vnni", "-mprefer-vector-width=512"]
let avx2C = ["-march=x86-64-v3"]
#else
let avx512C: [String] = []
let avx2C: [String] = []
#endif
// The kernel sources are reached from the per-set targets through relative includes; their
// public headers are CQBKernels'.
let kernelHeaders: CSetting = .headerSearchPath("../CQBKernels/include")

let package = Package(
    name: "QuantBench",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "quantbench", targets: ["quantbench", "QBBuildInfo"]),
        .library(name: "QBKernels", targets: ["QBKernels"]),
        .library(name: "QBModel", targets: ["QBModel"]),
        .library(name: "QBGeneration", targets: ["QBGeneration"]),
        .library(name: "QBRunner", targets: ["QBRunner"]),
        // For Benchmarks/: the seeded generator its random inputs come from.
        .library(name: "QBSupport", targets: ["QBSupport"]),
        .library(name: "QBHistory", targets: ["QBHistory"]),
        // For Fuzz/: the server's request parser and the load client's stream checks.
        .library(name: "QBOpenAI", targets: ["QBOpenAI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "5.0.1"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.0.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.5.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.0.0"),
        // Already under Hummingbird; `bench --endpoint`'s streaming client is written on it.
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.81.0"),
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
        .systemLibrary(
            name: "CLibEdit", path: "Sources/CLibEdit", pkgConfig: "libedit",
            providers: [.apt(["libedit-dev"])]),

        // Layer 0: what every layer shares (JSON, seeded generators, atomic files, the
        // cancellation flag, quantiles). Depends on nothing.
        .target(name: "QBSupport"),

        // Layer 1: kernels. C holds only what needs intrinsics or a spinning thread pool;
        // every C kernel has a plain Swift reference in QBKernels.
        // The kernel sources (Sources/CQBKernels/kernels) are compiled by the three per-set
        // targets; CQBKernels holds the public headers, the dispatch, the pool and the
        // counters.
        .target(name: "CQBKernelsAVX512", cSettings: [kernelHeaders, .unsafeFlags(kernelC + avx512C)]),
        .target(name: "CQBKernelsAVX2", cSettings: [kernelHeaders, .unsafeFlags(kernelC + avx2C)]),
        .target(name: "CQBKernelsPortable", cSettings: [kernelHeaders, .unsafeFlags(kernelC)]),
        .target(
            name: "CQBKernels", dependencies: ["CQBKernelsAVX512", "CQBKernelsAVX2", "CQBKernelsPortable"],
            path: "Sources/CQBKernels", exclude: ["kernels"], cSettings: [.unsafeFlags(kernelC)]),
        .target(
            name: "QBKernels",
            dependencies: ["CQBKernels", "CBLAS"]),

        // Layer 2: model files (GGUF, safetensors) read and written without the kernels.
        .target(name: "QBFormats", dependencies: ["QBSupport"]),

        // Layer 3: configs, forward pass, quantize-at-load, synthetic models.
        .target(name: "QBModel", dependencies: ["QBKernels", "QBFormats", "QBSupport"]),

        // Layer 2 too: the Jinja engine that chat templates are written in.
        .target(name: "QBJinja", dependencies: ["QBSupport"]),

        // Layer 3 too, beside QBModel: tokenizers, detokenizer, chat templates.
        .target(
            name: "QBText",
            dependencies: ["QBFormats", "QBJinja", "QBSupport", .product(name: "HeapModule", package: "swift-collections")]),

        // Layer 4: sampling and the token stream.
        .target(name: "QBGeneration", dependencies: ["QBModel", "QBText"]),

        // Layer 5: suites, metrics, reports.
        .target(
            name: "QBRunner",
            dependencies: ["QBGeneration", "CQBBuildInfo", "CTCMalloc", .product(name: "Yams", package: "Yams")]),

        // The commit (and whether the tree was dirty) compiled into the binary: `--version`
        // and every result's `environment.commit`. QBRunner reads it through a C header that
        // never changes (CQBBuildInfo, weak "unknown" defaults); the generated definitions are
        // in QBBuildInfo, which no module imports and the executable links. So a new commit
        // recompiles one small module and relinks, where a generated file in QBRunner
        // recompiled it and every module above it (124 s of CI's gate build of the parent).
        .target(name: "CQBBuildInfo"),
        .target(name: "QBBuildInfo", plugins: ["BuildInfoPlugin"]),
        .plugin(name: "BuildInfoPlugin", capability: .buildTool(), path: "Plugins/BuildInfoPlugin"),

        // Beside layer 5: the results history (SQLite by default, PostgreSQL for a team),
        // change points over it.
        .target(name: "QBHistory", dependencies: ["QBRunner", "QBSupport", "CSQLite", "CLibPQ"]),

        // Layer 6: OpenAI's wire format, both ends, without a network stack: the request bodies
        // the server accepts, the event streams the load client reads and the checks on them.
        // Its own module so the fuzzers' sanitized build takes these parsers without
        // SwiftNIO and Hummingbird.
        .target(name: "QBOpenAI", dependencies: ["QBRunner"]),

        // Layer 6 too: the OpenAI-compatible HTTP server (batched decode, admission, metrics).
        .target(
            name: "QBServe",
            dependencies: [
                "QBRunner", "QBOpenAI", .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]),

        // Layer 6 too: `bench --endpoint`, the load generator and streaming checks against
        // any OpenAI-compatible server, on a small HTTP/1.1 client over SwiftNIO.
        .target(
            name: "QBEndpoint",
            dependencies: [
                "QBRunner", "QBOpenAI", .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]),

        // Layer 7: the command line.
        .executableTarget(
            name: "quantbench",
            dependencies: [
                "QBRunner",
                "QBHistory",
                "QBServe",
                "QBEndpoint",
                "CLibEdit",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            linkerSettings: [.linkedLibrary("tcmalloc")]),

        // Shared by every test target: fixture paths, seeded random inputs, the Python
        // oracle runner, the test models.
        .target(
            name: "QBTestSupport", dependencies: ["QBRunner", "QBModel", "QBText"], path: "Tests/QBTestSupport"),

        .testTarget(name: "QBKernelsTests", dependencies: ["QBKernels", "QBTestSupport"]),
        .testTarget(name: "QBModelTests", dependencies: ["QBModel", "QBText", "QBFormats", "QBSupport", "QBRunner", "QBTestSupport"]),
        .testTarget(
            name: "QBTextTests", dependencies: ["QBText", "QBJinja", "QBFormats", "QBSupport", "QBTestSupport"], exclude: ["oracles"]),
        .testTarget(
            name: "QBHistoryTests", dependencies: ["QBHistory", "QBRunner", "QBTestSupport"], exclude: ["oracles"]),
        .testTarget(
            name: "QBGenerationTests", dependencies: ["QBGeneration", "QBRunner", "QBSupport", "QBTestSupport"]),
        .testTarget(name: "QBRunnerTests", dependencies: ["QBRunner", "QBJinja", "QBSupport", "QBTestSupport"]),
        .testTarget(name: "CLITests", dependencies: ["quantbench", "QBHistory", "QBRunner", "QBTestSupport"]),
        .testTarget(
            name: "QBServeTests", dependencies: ["QBServe", "QBOpenAI", "QBRunner", "QBGeneration", "QBSupport", "quantbench", "QBTestSupport"], exclude: ["oracles"]),
        .testTarget(
            name: "QBEndpointTests", dependencies: ["QBEndpoint", "QBOpenAI", "QBRunner", "QBSupport", "quantbench", "QBTestSupport"]),
        .testTarget(
            name: "QBOracleTests", dependencies: ["QBModel", "QBText", "QBGeneration", "QBRunner", "QBFormats", "QBSupport", "QBTestSupport"], exclude: ["oracles"]),
    ],
    swiftLanguageModes: [.v6]
)
