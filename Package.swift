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
        .library(name: "SwiftPushFuzzable", targets: ["PushCore", "PushTransport", "SwiftPush", "CSwiftPushABI"]),
    ],
    dependencies: [
        // Argument parsing for the command-line tool only: libswiftpush.so links none of it.
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // The worker's HTTP server (/metrics, /healthz, the status page): the CLI only. Its
        // default traits would build swift-configuration and full Foundation for nothing.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        // Hummingbird's logging API (already in its graph): its logger writes errors to stderr.
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
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
        .target(name: "CPushSystem"),
        // The C types of the public ABI (structs, enums, constants); merged into Include/swiftpush.h.
        .target(name: "CSwiftPushABI"),
        // No I/O: notification model, validation, reasons, JWT signing, response parsing, policies.
        .target(name: "PushCore", dependencies: ["COpenSSL", "CSwiftPushABI"]),
        // I/O: event loop, TLS, HTTP/2 connections, the client that owns them.
        .target(name: "PushTransport", dependencies: ["PushCore", "COpenSSL", "CNGHTTP2", "CSwiftPushABI", "CPushSystem"]),
        // The @c exports: the whole public C ABI of libswiftpush.so.
        .target(name: "SwiftPush", dependencies: ["PushTransport", "PushCore", "CSwiftPushABI"],
                exclude: ["exports.map"], linkerSettings: abiLinkerFlags),
        // The mock APNs server (a library, used by the CLI and the tests).
        .target(name: "APNsMock", dependencies: ["PushCore", "PushTransport", "COpenSSL", "CNGHTTP2"]),
        // The queue-fed worker (issue #15): Redis Streams in, PushClients out, one recorded outcome
        // per notification. Not part of libswiftpush.so.
        .target(name: "SwiftPushWorker", dependencies: ["PushTransport", "PushCore", "CSwiftPushABI", "CHiredis", "COpenSSL"]),
        // What the fleet's Redis keys say (issue 26): per shard, app and campaign progress, rates,
        // time left, heartbeats; read by `swiftpush status` and the worker's status page.
        .target(name: "SwiftPushStatus", dependencies: ["SwiftPushWorker"]),
        // The worker's HTTP server on Hummingbird: /metrics, /healthz, the status page and its
        // live feed. Not part of libswiftpush.so.
        .target(name: "SwiftPushWorkerHTTP", dependencies: ["SwiftPushWorker", "SwiftPushStatus",
                                                             .product(name: "Hummingbird", package: "hummingbird"),
                                                             .product(name: "Logging", package: "swift-log")]),
        // The command-line tool: send, bench, mock, jwt, worker, enqueue, outcomes, status.
        .executableTarget(name: "SwiftPushCLI", dependencies: ["APNsMock", "PushCore", "PushTransport", "SwiftPushWorker",
                                                              "SwiftPushStatus", "SwiftPushWorkerHTTP",
                                                              .product(name: "ArgumentParser", package: "swift-argument-parser")]),
        .testTarget(name: "PushCoreTests", dependencies: ["PushCore"]),
        .testTarget(name: "PushTransportTests", dependencies: ["PushTransport", "APNsMock", "PushCore"]),
        .testTarget(name: "APNsMockTests", dependencies: ["APNsMock", "PushCore", "PushTransport"]),
        .testTarget(name: "SwiftPushWorkerTests", dependencies: ["SwiftPushWorker", "PushCore", "CHiredis"]),
        // The status reader (pure parts in memory, the reader against a real redis-server) and
        // the worker's HTTP server (real sockets).
        .testTarget(name: "SwiftPushStatusTests", dependencies: ["SwiftPushStatus", "SwiftPushWorkerHTTP", "SwiftPushWorker", "PushCore"]),
        // The libFuzzer harnesses live in their own package, FuzzTesting/ (Tests/fuzz/run.sh),
        // so that a build of this one does not build them.
    ]
)
