// swift-tools-version:6.2
import PackageDescription

// A separate package so that users of Conductor never fetch the tool's dependencies.
let package = Package(
    name: "ConductorTools",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .executable(name: "conductor-report", targets: ["conductor-report"])
    ],
    dependencies: [
        // By path and by name: the checkout directory's name varies.
        .package(name: "Conductor", path: ".."),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        // What the tool does, as functions the tests can call: comparing and rendering reports.
        .target(
            name: "ConductorReportKit",
            dependencies: [.product(name: "ConductorReports", package: "Conductor")]
        ),
        .executableTarget(
            name: "conductor-report",
            dependencies: [
                "ConductorReportKit",
                .product(name: "ConductorReports", package: "Conductor"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(
            name: "ConductorReportKitTests",
            dependencies: ["ConductorReportKit", .product(name: "ConductorReports", package: "Conductor")],
            exclude: ["Fixtures"]
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
