// swift-tools-version:6.2
import PackageDescription

// A separate package so that users of Conductor never fetch the benchmark's dependencies.
let package = Package(
    name: "ConductorBenchmarks",
    platforms: [
        .macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2),
    ],
    dependencies: [
        .package(name: "Conductor", path: ".."),
        // The dependency-injection baseline.
        .package(url: "https://github.com/Swinject/Swinject", from: "2.10.0"),
        // Requests and responses for the gate scenarios.
        .package(url: "https://github.com/apple/swift-http-types", from: "1.3.0"),
        // The tracing variants of graph.independent: no-op, disabled, in-memory.
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.5.0"),
        // jobs.enqueue's baseline: the same row inserted with GRDB itself (the root package's requirement).
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    ],
    targets: [
        // glibc's malloc statistics, which the Glibc module does not export, for the memory scenario.
        .target(name: "MallocStats"),
        // Start and stop marks for callgrind, for `conductor-bench instructions`.
        .target(name: "CallgrindMarkers"),
        .executableTarget(
            name: "conductor-bench",
            dependencies: [
                .product(name: "Conductor", package: "Conductor"),
                .product(name: "ConductorJobs", package: "Conductor"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Swinject", package: "Swinject"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                "MallocStats",
                "CallgrindMarkers",
            ],
            swiftSettings: [
                .swiftLanguageMode(.v6),
                .enableUpcomingFeature("ExistentialAny"),
                .enableUpcomingFeature("MemberImportVisibility"),
                .enableUpcomingFeature("InternalImportsByDefault"),
            ]
        ),
    ]
)
