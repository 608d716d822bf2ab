// swift-tools-version:6.1
// The suites scripts/sanitize.sh runs under ASan (make test-asan) or TSan (make test-tsan) — the
// client's pure core, the client against the mock, the mock, the Swift API — in a package of
// their own, so that a sanitizer build compiles only what they test (issue 34, item 6): not
// SwiftNIO, Hummingbird, ArgumentParser, the worker or the command, which the main package's
// test build (every suite) and its command take in: most of what make test's ASan build compiled.
// Every target here is the main package's own: Sources/<name> and Tests/<name> are symbolic
// links to ../../Sources/<name> and ../../Tests/<name>, each with the dependencies it has in
// ../../Package.swift (kept the same: `make test-docs` runs scripts/check-sanitizer-package.py,
// which names any target whose dependencies differ). The tests
// start the mock as a process from the command (APNsMockTests' MockProcess): the debug build's,
// named by SWIFTPUSH_TEST_CLI (scripts/sanitize.sh), since this package builds no command.
import PackageDescription

let package = Package(
    name: "swiftpush-sanitizers",
    dependencies: [
        // The same requirements as ../../Package.swift's.
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    ],
    targets: [
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl"),
        .systemLibrary(name: "CNGHTTP2", pkgConfig: "libnghttp2"),
        .systemLibrary(name: "CPushSystem"),
        .target(name: "CSwiftPushABI"),
        .target(name: "PushCore", dependencies: ["CSwiftPushABI"]),
        .target(name: "PushCrypto", dependencies: ["PushCore", "COpenSSL"]),
        .target(name: "PushTransport", dependencies: ["PushCore", "PushCrypto", "COpenSSL", "CNGHTTP2", "CPushSystem"]),
        .target(name: "PushClientMachine", dependencies: ["PushCore", "CSwiftPushABI"]),
        .target(name: "PushClientCore", dependencies: ["PushClientMachine", "PushTransport", "PushCore", "PushCrypto", "COpenSSL", "CNGHTTP2", "CSwiftPushABI", "CPushSystem"]),
        .target(name: "PushChannels", dependencies: ["PushClientCore", "PushTransport", "PushCore", "PushCrypto", "CSwiftPushABI", "COpenSSL", "CNGHTTP2", "CPushSystem"]),
        .target(name: "SwiftPushKit", dependencies: [
                    "PushChannels", "PushClientCore", "PushCore", "PushCrypto", "CSwiftPushABI",
                    .product(name: "Logging", package: "swift-log"),
                    .product(name: "CoreMetrics", package: "swift-metrics"),
                    .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                ],
                swiftSettings: [.swiftLanguageMode(.v6)]),
        .target(name: "APNsMock", dependencies: ["PushCore", "PushCrypto", "PushTransport", "COpenSSL", "CNGHTTP2"]),
        .target(name: "CTestProcess", path: "Tests/CTestProcess"),
        .target(name: "TestProcessSupport", dependencies: ["CTestProcess"], path: "Tests/TestProcessSupport"),
        .testTarget(name: "PushClientCoreTests", dependencies: ["PushClientMachine", "PushClientCore", "PushTransport", "PushCore"]),
        .testTarget(name: "PushTransportTests", dependencies: ["TestProcessSupport", "PushTransport", "PushClientCore", "PushChannels", "APNsMock", "PushCore", "PushCrypto",
                                                     "CSwiftPushABI", "COpenSSL", "CNGHTTP2"]),
        .testTarget(name: "APNsMockTests", dependencies: ["TestProcessSupport", "APNsMock", "PushCore", "PushCrypto", "PushTransport"]),
        .testTarget(name: "SwiftPushKitTests", dependencies: [
                        "TestProcessSupport", "SwiftPushKit", "APNsMock", "PushCore", "PushClientCore",
                        .product(name: "Logging", package: "swift-log"),
                        .product(name: "InMemoryLogging", package: "swift-log"),
                        .product(name: "MetricsTestKit", package: "swift-metrics"),
                        .product(name: "CoreMetrics", package: "swift-metrics"),
                        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                    ]),
    ]
)
