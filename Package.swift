// swift-tools-version:6.1
// swiftpush: an embeddable APNs provider library (Swift core, C ABI, libswiftpush.so).
import PackageDescription

/// This package's directory: the version script's path must not depend on the directory a
/// build starts in (FuzzTesting/ builds this package as a dependency).
let packageDirectory = String(#filePath.dropLast("Package.swift".count))

/// Linker flags for libswiftpush.so: a SONAME, `-z nodelete` (a dlclose'd Swift library
/// crashes the host otherwise) and a version script that exports `push_*` only.
let abiLinkerFlags: [LinkerSetting] = [
    .unsafeFlags([
        "-Xlinker", "-soname=libswiftpush.so",
        "-Xlinker", "-z", "-Xlinker", "nodelete",
        "-Xlinker", "--version-script=\(packageDirectory)Sources/SwiftPush/exports.map",
    ])
]

let package = Package(
    name: "swiftpush",
    products: [
        .library(name: "swiftpush", type: .dynamic, targets: ["SwiftPush"]),
        .executable(name: "swiftpush-cli", targets: ["SwiftPushCLI"]),
        // The modules under the C ABI, for the fuzz harnesses' own package (FuzzTesting/, which
        // depends on this one by path). Not an API: linked statically into the harnesses.
        .library(name: "SwiftPushFuzzable", targets: ["PushCore", "PushTransport", "PushClientCore", "PushChannels", "SwiftPush", "CSwiftPushABI"]),
        // The Swift API (async/await, swift-log, swift-metrics, ServiceLifecycle): what a Swift
        // program imports. Not the C ABI (product swiftpush, target SwiftPush).
        .library(name: "SwiftPushKit", targets: ["SwiftPushKit"]),
        // The Swift API's row in `make bench` (scripts/bench.sh).
        .executable(name: "swiftpushkit-bench", targets: ["SwiftPushKitBench"]),
    ],
    dependencies: [
        // Argument parsing for the command-line tool only: libswiftpush.so links none of it.
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // The Swift API's conventions (SwiftPushKit only: libswiftpush.so links none of them).
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // The worker's HTTP server (/metrics, /healthz, the status page): the CLI only. Its
        // default traits would build swift-configuration and full Foundation for nothing.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
    ],
    targets: [
        // System libraries; each umbrella header has a unique name (see docs/toolchain.md).
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl",
                       providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CNGHTTP2", pkgConfig: "libnghttp2",
                       providers: [.apt(["libnghttp2-dev"])]),
        // hiredis, for the worker and the CLI only (libswiftpush.so links OpenSSL and nghttp2 alone).
        .systemLibrary(name: "CHiredis", pkgConfig: "hiredis",
                       providers: [.apt(["libhiredis-dev"])]),
        // Linux interfaces missing from Swift's Glibc module (epoll, eventfd, TCP options).
        // Debug builds give its C DWARF 4, as the Swift code has: Debian's valgrind 3.19 misreads
        // clang's DWARF 5 (DW_FORM_addrx) and, depending on the library's layout, gives up on
        // the whole library (scripts/memcheck.sh).
        .target(name: "CPushSystem", cSettings: [.unsafeFlags(["-gdwarf-4"], .when(configuration: .debug))]),
        // The C types of the public ABI (structs, enums, constants); merged into Include/swiftpush.h.
        .target(name: "CSwiftPushABI"),
        // No I/O: notification model, validation, reasons, JWT signing, response parsing, policies.
        .target(name: "PushCore", dependencies: ["COpenSSL", "CSwiftPushABI"]),
        // I/O, knowing nothing of APNs's requests: the event loop, sockets, name resolution, TLS,
        // the TLS + HTTP/2 byte pump (TLSH2Socket), file reading. Under the client and the mock.
        .target(name: "PushTransport", dependencies: ["PushCore", "COpenSSL", "CNGHTTP2", "CPushSystem"]),
        // The APNs client: PushClient(Group), its connections (APNsConnection, ConnectionState),
        // slots, pool, retries, options, metrics. Built on PushTransport.
        .target(name: "PushClientCore", dependencies: ["PushTransport", "PushCore", "COpenSSL", "CNGHTTP2", "CSwiftPushABI", "CPushSystem"]),
        // Channel management (create, read, delete, list broadcast channels): blocking calls on
        // connections of their own, with the client's configuration and ConnectionState.
        .target(name: "PushChannels", dependencies: ["PushClientCore", "PushTransport", "PushCore", "CSwiftPushABI", "COpenSSL", "CNGHTTP2"]),
        // The @c exports: the whole public C ABI of libswiftpush.so.
        .target(name: "SwiftPush", dependencies: ["PushChannels", "PushClientCore", "PushTransport", "PushCore", "CSwiftPushABI"],
                exclude: ["exports.map"], linkerSettings: abiLinkerFlags),
        // The Swift API: values, async/await, a host-thread engine, Logger, metrics, Service.
        .target(name: "SwiftPushKit", dependencies: [
                    "PushChannels", "PushClientCore", "PushCore", "CSwiftPushABI",
                    .product(name: "Logging", package: "swift-log"),
                    .product(name: "CoreMetrics", package: "swift-metrics"),
                    .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                ],
                swiftSettings: [.swiftLanguageMode(.v6)]),
        .executableTarget(name: "SwiftPushKitBench", dependencies: ["SwiftPushKit", .product(name: "Logging", package: "swift-log")],
                          swiftSettings: [.swiftLanguageMode(.v6)]),
        // The mock APNs server (a library, used by the CLI and the tests).
        .target(name: "APNsMock", dependencies: ["PushCore", "PushTransport", "COpenSSL", "CNGHTTP2"]),
        // Redis for the worker and the CLI: connections in the clear or over TLS (OpenSSL, with
        // certificate and host-name verification), AUTH, Redis Cluster routing, WAIT; hiredis
        // for its RESP reader only. Not part of libswiftpush.so.
        .target(name: "SwiftPushRedis", dependencies: ["PushCore", "PushTransport", "CHiredis", "COpenSSL"]),
        // The queue-fed worker (issue #15): Redis Streams in, PushClients out, one recorded outcome
        // per notification. Not part of libswiftpush.so.
        .target(name: "SwiftPushWorker", dependencies: ["SwiftPushKit", "PushClientCore", "PushTransport", "PushCore", "CSwiftPushABI", "SwiftPushRedis", "CHiredis", "COpenSSL"]),
        // What the fleet's Redis keys say (issue 26): per shard, app and campaign progress, rates,
        // time left, heartbeats; read by `swiftpush status` and the worker's status page.
        .target(name: "SwiftPushStatus", dependencies: ["SwiftPushWorker", "SwiftPushRedis"]),
        // The worker's HTTP server on Hummingbird: /metrics, /healthz, the status page and its
        // live feed. Not part of libswiftpush.so.
        .target(name: "SwiftPushWorkerHTTP", dependencies: ["SwiftPushWorker", "SwiftPushStatus", "PushCore",
                                                             .product(name: "Hummingbird", package: "hummingbird"),
                                                             .product(name: "Logging", package: "swift-log")]),
        // The command-line tool: send, bench, mock, jwt, worker, enqueue, outcomes, channels, status.
        // send, bench and channels use the Swift API (SwiftPushKit), as any Swift host would.
        .executableTarget(name: "SwiftPushCLI", dependencies: ["APNsMock", "PushCore", "PushTransport", "PushClientCore", "PushChannels", "SwiftPushWorker", "SwiftPushRedis",
                                                              "SwiftPushKit", "CSwiftPushABI", "SwiftPushStatus", "SwiftPushWorkerHTTP",
                                                              .product(name: "ArgumentParser", package: "swift-argument-parser"),
                                                              .product(name: "Logging", package: "swift-log")]),
        // What the tests start and wait for (issue 36): `ChildProcess` (children that die with the
        // test process, waits with a bound), `OwnThread` (blocking test code inside the test's
        // task), `TestFiles`; fork and prctl in C (CTestProcess). Test support, not a product.
        .target(name: "CTestProcess", path: "Tests/CTestProcess"),
        .target(name: "TestProcessSupport", dependencies: ["CTestProcess"], path: "Tests/TestProcessSupport"),
        .testTarget(name: "PushCoreTests", dependencies: ["PushCore"]),
        // PushClientCore's pure parts in memory: no sockets, no threads, no mock (PushTransport only
        // for its values, such as TransportError).
        .testTarget(name: "PushClientCoreTests", dependencies: ["PushClientCore", "PushTransport", "PushCore"]),
        // The client against the mock over real TLS and HTTP/2: PushTransport, PushClientCore and
        // PushChannels together (one target: they share the client test support and the mock).
        .testTarget(name: "PushTransportTests", dependencies: ["TestProcessSupport", "PushTransport", "PushClientCore", "PushChannels", "APNsMock", "PushCore"]),
        .testTarget(name: "APNsMockTests", dependencies: ["TestProcessSupport", "APNsMock", "PushCore", "PushTransport"]),
        .testTarget(name: "SwiftPushWorkerTests", dependencies: ["TestProcessSupport", "SwiftPushWorker", "SwiftPushRedis", "PushCore", "CHiredis"]),
        // SwiftPushRedis: unit tests, and real redis-servers (TLS, ACL users, a 6-node cluster).
        .testTarget(name: "SwiftPushRedisTests", dependencies: ["TestProcessSupport", "SwiftPushRedis", "PushCore", "CHiredis"]),
        .testTarget(name: "SwiftPushKitTests", dependencies: [
                        "TestProcessSupport", "SwiftPushKit", "APNsMock", "PushCore", "PushClientCore",
                        .product(name: "Logging", package: "swift-log"),
                        .product(name: "InMemoryLogging", package: "swift-log"),
                        .product(name: "MetricsTestKit", package: "swift-metrics"),
                        .product(name: "CoreMetrics", package: "swift-metrics"),
                        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                    ]),
        // The status reader (pure parts in memory, the reader against a real redis-server) and
        // the worker's HTTP server (real sockets).
        .testTarget(name: "SwiftPushStatusTests", dependencies: ["TestProcessSupport", "SwiftPushStatus", "SwiftPushWorkerHTTP", "SwiftPushWorker", "SwiftPushRedis", "PushCore"]),
        // The libFuzzer harnesses live in their own package, FuzzTesting/ (Tests/fuzz/run.sh),
        // so that a build of this one does not build them.
    ]
)
