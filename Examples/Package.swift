// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "ConductorExamples",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    dependencies: [
        .package(name: "Conductor", path: "..")
    ],
    targets: [
        .executableTarget(
            name: "conductor-demo",
            dependencies: [.product(name: "Conductor", package: "Conductor")]
        )
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
