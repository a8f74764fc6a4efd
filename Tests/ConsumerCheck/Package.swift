// swift-tools-version:6.2
// An app's view of Conductor. `ConsumerCheck` depends on the `Conductor` product only;
// `scripts/consumer-check` builds it and fails if its build folder holds a module of SwiftNIO,
// AsyncHTTPClient or swift-service-lifecycle — the server products' dependencies, which an
// app must never compile. `LauncherConsumer` depends on `ConductorLaunch` only, built alone:
// it must compile neither HTTPTypes and the gate nor the saved reports and their renderers.
import PackageDescription

let package = Package(
    name: "ConsumerCheck",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    dependencies: [
        // By path and by name: the checkout directory's name varies.
        .package(name: "Conductor", path: "../..")
    ],
    targets: [
        .executableTarget(
            name: "ConsumerCheck",
            dependencies: [.product(name: "Conductor", package: "Conductor")]
        ),
        .executableTarget(
            name: "LauncherConsumer",
            dependencies: [.product(name: "ConductorLaunch", package: "Conductor")]
        ),
    ]
)
