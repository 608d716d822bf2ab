// swift-tools-version:6.1
// Examples of the Swift API (SwiftPushKit) a Swift developer would copy:
//   notify-service  a Hummingbird 2 service: POST /notify sends through APNsClient, and SIGTERM
//                   drains it and closes cleanly (ServiceLifecycle)
//   send-one        the README's few lines: one notification, its result
//   send-many       the README's engine loop: a batch at full rate on the host's own thread
// In your own package, depend on swiftpush by its URL instead of this path (README, "Swift").
// `traits: []`: not swiftpush's default trait, Tools (its command's and worker's packages);
// `name:`: a path dependency is otherwise named after its folder, which may be called anything.
// Linux only, as swiftpush is (README, "Platforms"): SwiftPM has no minimum Linux to declare, and
// declaring macOS would promise a build that stops at swiftpush's #error.
import PackageDescription

let package = Package(
    name: "NotifyService",
    dependencies: [
        .package(name: "swiftpush", path: "../..", traits: []),
        // `traits: []`: Hummingbird's default traits (swift-configuration support, full
        // Foundation) are for what this service does not use, and would be built for nothing.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
    ],
    targets: [
        .executableTarget(name: "NotifyService", dependencies: [
            .product(name: "SwiftPushKit", package: "swiftpush"),
            .product(name: "Hummingbird", package: "hummingbird"),
        ]),
        .executableTarget(name: "SendOne", dependencies: [.product(name: "SwiftPushKit", package: "swiftpush")]),
        .executableTarget(name: "SendMany", dependencies: [.product(name: "SwiftPushKit", package: "swiftpush")]),
    ]
)
