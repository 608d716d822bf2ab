// swift-tools-version:6.0
// The libFuzzer harnesses of swiftpush (Tests/fuzz/README.md), in a package of their own that
// depends on the main one by path (as swift-nio-http2's FuzzTesting/), so that building the
// main package never builds them. Tests/fuzz/run.sh builds them with ASan, coverage and
// -DFUZZING and runs them; a plain `swift build --package-path FuzzTesting` makes them corpus
// replayers (`.build/debug/FuzzPayload FILE|DIR...`).
import PackageDescription

/// The modules under the C ABI (PushCore, PushCrypto, PushTransport, PushClientMachine, PushClientCore, PushChannels, SwiftPush, CSwiftPushABI).
let swiftpush: Target.Dependency = .product(name: "SwiftPushFuzzable", package: "swiftpush")

let package = Package(
    name: "swiftpush-fuzz",
    dependencies: [.package(name: "swiftpush", path: "..")],
    targets: [
        // What every harness shares: the libFuzzer driver, input decoding, property checks.
        .target(name: "FuzzSupport", dependencies: [swiftpush]),
        // One executable per harness (Tests/fuzz/run.sh names them).
        .executableTarget(name: "FuzzJSON", dependencies: ["FuzzSupport", swiftpush]),
        .executableTarget(name: "FuzzPayload", dependencies: ["FuzzSupport", swiftpush]),
        .executableTarget(name: "FuzzResponse", dependencies: ["FuzzSupport", swiftpush]),
        .executableTarget(name: "FuzzApnsFile", dependencies: ["FuzzSupport", swiftpush]),
        .executableTarget(name: "FuzzKeys", dependencies: ["FuzzSupport", swiftpush]),
        .executableTarget(name: "FuzzCABI", dependencies: ["FuzzSupport", swiftpush]),
    ]
)
