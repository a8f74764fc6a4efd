// swift-tools-version:6.2
import PackageDescription

let package = Package(
    name: "ConductorExamples",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .executable(name: "conductor-demo", targets: ["conductor-demo"])
    ],
    dependencies: [
        // By path and by name: the checkout directory's name varies.
        .package(name: "Conductor", path: ".."),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.3.0"),
        .package(url: "https://github.com/swhitty/FlyingFox", from: "0.20.0"),
        // The demo's stand-ins for an app's tracer and metrics backend.
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.5.0"),
    ],
    targets: [
        // Everything the demo does, as functions the tests can call.
        .target(
            name: "DemoKit",
            dependencies: [
                .product(name: "Conductor", package: "Conductor"),
                .product(name: "ConductorURLSession", package: "Conductor"),
                // The offline-order story's app keeps its orders in a job queue.
                .product(name: "ConductorJobs", package: "Conductor"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "HTTPTypesFoundation", package: "swift-http-types"),
                .product(name: "FlyingFox", package: "FlyingFox"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ]
        ),
        .executableTarget(
            name: "conductor-demo",
            dependencies: [
                "DemoKit",
                .product(name: "Conductor", package: "Conductor"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(
            name: "DemoKitTests",
            dependencies: [
                "DemoKit",
                // Built before the tests: the offline-order test runs it as the app it kills.
                "conductor-demo",
                .product(name: "Conductor", package: "Conductor"),
                .product(name: "ConductorJobs", package: "Conductor"),
                .product(name: "ConductorTestKit", package: "Conductor"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
    ]
)

for target in package.targets {
    var settings = target.swiftSettings ?? []
    settings.append(contentsOf: [
        .swiftLanguageMode(.v6),
        .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("MemberImportVisibility"),
        .enableUpcomingFeature("InternalImportsByDefault"),
    ])
    target.swiftSettings = settings
}
