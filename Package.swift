// swift-tools-version:6.1
// swiftpush: an embeddable APNs provider library (Swift core, C ABI, libswiftpush.so).
// Licensed under the Apache License, Version 2.0: LICENSE and NOTICE at this package's root.
import PackageDescription

/// This package's directory: the version script's path must not depend on the directory a
/// build starts in (FuzzTesting/ builds this package as a dependency).
let packageDirectory = String(#filePath.dropLast("Package.swift".count))

/// The SONAME: libswiftpush.so.<major of VERSION>, so that the loader tells apart a library of
/// an incompatible ABI (docs/abi.md says what bumps it; scripts/check-version.sh checks the
/// number against VERSION). SwiftPM still names the file libswiftpush.so: installs rename it to
/// libswiftpush.so.<VERSION> beside the two usual links, and scripts/soname-link.sh makes the
/// libswiftpush.so.0 link in build directories.
let soname = "libswiftpush.so.0"

/// Linker flags for libswiftpush.so: its SONAME, `-z nodelete` (a dlclose'd Swift library
/// crashes the host otherwise) and a version script that exports `push_*` only. Unsafe flags:
/// SwiftPM refuses them in a package used by version, so the `swiftpush` product (the C
/// library) builds only here or in a package depending on this one by path; `SwiftPushKit`
/// and every target under it have none (`make test-consumer` builds one by version).
let abiLinkerFlags: [LinkerSetting] = [
    .unsafeFlags([
        "-Xlinker", "-soname=\(soname)",
        "-Xlinker", "-z", "-Xlinker", "nodelete",
        "-Xlinker", "--version-script=\(packageDirectory)Sources/SwiftPush/exports.map",
    ])
]

/// What only the command-line tool, the worker's HTTP server and the status page need. SwiftPM
/// 6.1+ leaves a package dependency used under a disabled trait out of resolution, not only out
/// of the build, so a package depending on this one with `traits: []` checks out swift-log,
/// swift-metrics, swift-service-lifecycle and their own dependencies, nothing else
/// (`make test-consumer`). On by default: `swift build` here builds the CLI.
let tools: TargetDependencyCondition? = .when(traits: ["Tools"])

let package = Package(
    name: "swiftpush",
    products: [
        .library(name: "swiftpush", type: .dynamic, targets: ["SwiftPush"]),
        .executable(name: "swiftpush-cli", targets: ["SwiftPushCLI"]),
        // The modules under the C ABI, for the fuzz harnesses' own package (FuzzTesting/, which
        // depends on this one by path). Not an API: linked statically into the harnesses.
        .library(name: "SwiftPushFuzzable", targets: ["PushCore", "PushCrypto", "PushTransport", "PushClientMachine", "PushClientCore", "PushChannels", "SwiftPush", "CSwiftPushABI"]),
        // The Swift API (async/await, swift-log, swift-metrics, ServiceLifecycle): what a Swift
        // program imports. Not the C ABI (product swiftpush, target SwiftPush).
        .library(name: "SwiftPushKit", targets: ["SwiftPushKit"]),
        // The Swift API's row in `make bench` (scripts/bench.sh).
        .executable(name: "swiftpushkit-bench", targets: ["SwiftPushKitBench"]),
    ],
    traits: [
        .trait(name: "Tools", description: "The swiftpush command, the worker's HTTP server and status page: swift-argument-parser and Hummingbird (with SwiftNIO)."),
        .default(enabledTraits: ["Tools"]),
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
        // Not through pkg-config: hiredis.pc's -D_FILE_OFFSET_BITS=64 is a flag SwiftPM prohibits,
        // warned about in every build of every package depending on this one; the umbrella header
        // includes <hiredis/hiredis.h>, which finds its own headers without -I.
        .systemLibrary(name: "CHiredis", providers: [.apt(["libhiredis-dev"])]),
        // Linux interfaces missing from Swift's Glibc module (epoll, eventfd, TCP options) and the
        // pooled allocator for nghttp2: a module map over a header of static inline functions, no
        // C file. So no unsafe flags (a package depending on this one by version may not have any)
        // and no C compiled with clang's DWARF 5, which Debian's valgrind 3.19 misreads
        // (DW_FORM_addrx; scripts/memcheck.sh): the inline code is emitted with the Swift code's
        // DWARF 4.
        .systemLibrary(name: "CPushSystem"),
        // The C types of the public ABI (structs, enums, constants); merged into Include/swiftpush.h.
        .target(name: "CSwiftPushABI"),
        // No I/O and no C library: notification model, validation, reasons, response parsing,
        // policies, the log's and the transport's values. Under the client's machine, which must
        // not reach OpenSSL (issue 34).
        .target(name: "PushCore", dependencies: ["CSwiftPushABI"]),
        // What needs OpenSSL and no I/O: the token-signing key, the provider token (JWT),
        // secrets cleared with OPENSSL_cleanse, OpenSSL's error queue.
        .target(name: "PushCrypto", dependencies: ["PushCore", "COpenSSL"]),
        // I/O, knowing nothing of APNs's requests: the event loop, sockets, name resolution, TLS,
        // the TLS + HTTP/2 byte pump (TLSH2Socket), file reading. Under the client and the mock.
        .target(name: "PushTransport", dependencies: ["PushCore", "PushCrypto", "COpenSSL", "CNGHTTP2", "CPushSystem"]),
        // The client's machine (issue 34): ClientCore (every decision of the I/O thread, events
        // in, actions out), ConnectionState, the pool, the queue, the slots and the outcomes'
        // bookkeeping. No I/O, and dependencies that cannot reach OpenSSL, nghttp2 or the
        // transport, so the compiler keeps it pure (scripts/check-target-imports.py checks the
        // closure; `make test` builds with --explicit-target-dependency-import-check error).
        .target(name: "PushClientMachine", dependencies: ["PushCore", "CSwiftPushABI"]),
        // The APNs client: PushClient(Group), its connections (APNsConnection, ConnectionState),
        // slots, pool, retries, options, metrics. Built on PushTransport.
        .target(name: "PushClientCore", dependencies: ["PushClientMachine", "PushTransport", "PushCore", "PushCrypto", "COpenSSL", "CNGHTTP2", "CSwiftPushABI", "CPushSystem"]),
        // Channel management (create, read, delete, list broadcast channels): blocking calls on
        // connections of their own, with the client's configuration and ConnectionState.
        .target(name: "PushChannels", dependencies: ["PushClientCore", "PushTransport", "PushCore", "PushCrypto", "CSwiftPushABI", "COpenSSL", "CNGHTTP2", "CPushSystem"]),
        // The @c exports: the whole public C ABI of libswiftpush.so.
        .target(name: "SwiftPush", dependencies: ["PushChannels", "PushClientCore", "PushTransport", "PushCore", "CSwiftPushABI"],
                exclude: ["exports.map"], linkerSettings: abiLinkerFlags),
        // The Swift API: values, async/await, a host-thread engine, Logger, metrics, Service.
        .target(name: "SwiftPushKit", dependencies: [
                    "PushChannels", "PushClientCore", "PushCore", "PushCrypto", "CSwiftPushABI",
                    .product(name: "Logging", package: "swift-log"),
                    .product(name: "CoreMetrics", package: "swift-metrics"),
                    .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                ],
                swiftSettings: [.swiftLanguageMode(.v6)]),
        .executableTarget(name: "SwiftPushKitBench", dependencies: ["SwiftPushKit", .product(name: "Logging", package: "swift-log")],
                          swiftSettings: [.swiftLanguageMode(.v6)]),
        // The mock APNs server (a library, used by the CLI and the tests).
        .target(name: "APNsMock", dependencies: ["PushCore", "PushCrypto", "PushTransport", "COpenSSL", "CNGHTTP2"]),
        // Redis for the worker and the CLI: connections in the clear or over TLS (OpenSSL, with
        // certificate and host-name verification), AUTH, Redis Cluster routing, WAIT; hiredis
        // for its RESP reader only. Not part of libswiftpush.so.
        .target(name: "SwiftPushRedis", dependencies: ["PushCore", "PushCrypto", "PushTransport", "CHiredis", "COpenSSL"]),
        // The queue-fed worker (issue #15): Redis Streams in, PushClients out, one recorded outcome
        // per notification. Not part of libswiftpush.so.
        // The fleet's Redis key names and the heartbeat's record: what the worker writes and the
        // status reads, so that the status does not depend on the whole worker (issue 34). No
        // dependency (not even the Redis client): the worker's pure machine uses it.
        .target(name: "SwiftPushKeys"),
        // The worker's machine (issue 34): ShardMachine (every decision of a shard, events in,
        // actions out), its events and actions, and the values it works with (entries read and
        // checked, outcomes, settlements, pacing). No I/O, and dependencies that cannot reach
        // OpenSSL, nghttp2, the transport, the client, hiredis or the Redis client
        // (scripts/check-pure-targets.py), so the compiler keeps it pure.
        .target(name: "SwiftPushWorkerMachine", dependencies: ["SwiftPushKeys", "PushCore", "CSwiftPushABI"]),
        // The worker's Redis wire format: its Lua scripts, the commands and replies of each
        // QueueRequest (RedisShardCommands), the lanes (main, settle, fast), the campaign controls.
        .target(name: "SwiftPushWorkerRedis", dependencies: ["SwiftPushWorkerMachine", "SwiftPushKeys", "SwiftPushRedis", "PushCore", "CHiredis", "COpenSSL"]),
        // The worker's driver: WorkerDriver and its shard runners (the machines' I/O), the
        // clients of each app, the configuration, metrics and log. Re-exports the machine and the
        // wire format, which were this module's before they became targets of their own.
        .target(name: "SwiftPushWorker", dependencies: ["SwiftPushWorkerMachine", "SwiftPushWorkerRedis", "SwiftPushKeys", "SwiftPushKit", "PushClientCore", "PushTransport", "PushCore", "CSwiftPushABI", "SwiftPushRedis", "COpenSSL"]),
        // What the fleet's Redis keys say (issue 26): per shard, app and campaign progress, rates,
        // time left, heartbeats; read by `swiftpush status` and the worker's status page.
        .target(name: "SwiftPushStatus", dependencies: ["SwiftPushKeys", "SwiftPushRedis"]),
        // The worker's HTTP server on Hummingbird: /metrics, /healthz, the status page and its
        // live feed. Not part of libswiftpush.so.
        .target(name: "SwiftPushWorkerHTTP", dependencies: ["SwiftPushWorker", "SwiftPushStatus", "PushCore",
                                                             .product(name: "Hummingbird", package: "hummingbird", condition: tools),
                                                             .product(name: "Logging", package: "swift-log")]),
        // The command-line tool: send, bench, mock, jwt, worker, enqueue, outcomes, channels, status.
        // send, bench and channels use the Swift API (SwiftPushKit), as any Swift host would.
        .executableTarget(name: "SwiftPushCLI", dependencies: ["APNsMock", "PushCore", "PushCrypto", "PushTransport", "PushClientCore", "PushChannels", "SwiftPushWorker", "SwiftPushKeys", "SwiftPushRedis",
                                                              "SwiftPushKit", "CSwiftPushABI", "SwiftPushStatus", "SwiftPushWorkerHTTP",
                                                              .product(name: "ArgumentParser", package: "swift-argument-parser", condition: tools),
                                                              .product(name: "Logging", package: "swift-log")]),
        // The Swift examples (Examples/NotifyService/Sources): what a Swift developer copies, built
        // here with the rest (one build of SwiftNIO and Hummingbird, not a second package's own),
        // run by `swift run SendOne` (README's quick start) and `make test-example`. A package of
        // your own depends on this one instead (README, "Swift"; `make test-consumer` builds one).
        .executableTarget(name: "NotifyService", dependencies: ["SwiftPushKit",
                                                                .product(name: "Hummingbird", package: "hummingbird", condition: tools),
                                                                .product(name: "Logging", package: "swift-log")],
                          path: "Examples/NotifyService/Sources/NotifyService"),
        .executableTarget(name: "SendOne", dependencies: ["SwiftPushKit"], path: "Examples/NotifyService/Sources/SendOne"),
        .executableTarget(name: "SendMany", dependencies: ["SwiftPushKit"], path: "Examples/NotifyService/Sources/SendMany"),
        .executableTarget(name: "SendTasks", dependencies: ["SwiftPushKit"], path: "Examples/NotifyService/Sources/SendTasks"),
        // What the tests start and wait for (issue 36): `ChildProcess` (children that die with the
        // test process, waits with a bound), `OwnThread` (blocking test code inside the test's
        // task), `TestFiles`; fork and prctl in C (CTestProcess). Test support, not a product.
        .target(name: "CTestProcess", path: "Tests/CTestProcess"),
        .target(name: "TestProcessSupport", dependencies: ["CTestProcess"], path: "Tests/TestProcessSupport"),
        .testTarget(name: "PushCoreTests", dependencies: ["PushCore", "PushCrypto", "COpenSSL"]),
        // PushClientCore's pure parts in memory: no sockets, no threads, no mock (PushTransport only
        // for its values, such as TransportError).
        .testTarget(name: "PushClientCoreTests", dependencies: ["PushClientMachine", "PushClientCore", "PushTransport", "PushCore"]),
        // The client against the mock over real TLS and HTTP/2: PushTransport, PushClientCore and
        // PushChannels together (one target: they share the client test support and the mock).
        .testTarget(name: "PushTransportTests", dependencies: ["TestProcessSupport", "PushTransport", "PushClientCore", "PushChannels", "APNsMock", "PushCore", "PushCrypto",
                                                     "CSwiftPushABI", "COpenSSL", "CNGHTTP2"]),
        .testTarget(name: "APNsMockTests", dependencies: ["TestProcessSupport", "APNsMock", "PushCore", "PushCrypto", "PushTransport"]),
        .testTarget(name: "SwiftPushWorkerTests", dependencies: ["TestProcessSupport", "SwiftPushWorker", "SwiftPushWorkerMachine", "SwiftPushWorkerRedis", "SwiftPushKeys", "SwiftPushRedis", "PushCore", "CHiredis",
                                                                 "SwiftPushKit", "PushClientCore", "CSwiftPushABI"]),
        // SwiftPushRedis: unit tests, and real redis-servers (TLS, ACL users, a 6-node cluster).
        .testTarget(name: "SwiftPushRedisTests", dependencies: ["TestProcessSupport", "SwiftPushRedis", "PushCore", "PushCrypto", "CHiredis"]),
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
        .testTarget(name: "SwiftPushStatusTests", dependencies: ["TestProcessSupport", "SwiftPushStatus", "SwiftPushWorkerHTTP", "SwiftPushWorker", "SwiftPushKeys", "SwiftPushRedis", "PushCore"]),
        // The libFuzzer harnesses live in their own package, FuzzTesting/ (Tests/fuzz/run.sh),
        // so that a build of this one does not build them.
    ]
)
