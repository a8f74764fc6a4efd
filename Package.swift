// swift-tools-version:6.2
// 6.2 (Xcode 26) because the graph calls `addImmediateTask`, which a 6.0 or 6.1 compiler does
// not know; on OS versions before 26 the graph falls back to `addTask` at run time, so the
// deployment targets below stay where they are. See "Supported versions" in the README.
import PackageDescription

let package = Package(
    name: "Conductor",
    platforms: [
        .macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2),
    ],
    products: [
        // Everything in one line: `import Conductor` re-exports every area below.
        .library(name: "Conductor", targets: ["Conductor"]),
        // One product per concept, for an app that wants only that and what it stands on: the
        // graph (and schedules), the launcher (with the graph), the harmonizer, schedulable
        // objects and their assembly, the request gate (the one that brings HTTPTypes), and
        // saved reports with their renderings. docs/targets.txt lists the allowed arrows.
        .library(name: "ConductorGraph", targets: ["ConductorGraph"]),
        .library(name: "ConductorLaunch", targets: ["ConductorLaunch"]),
        .library(name: "ConductorHarmonizer", targets: ["ConductorHarmonizer"]),
        .library(name: "ConductorAssembly", targets: ["ConductorAssembly"]),
        .library(name: "ConductorGate", targets: ["ConductorGate"]),
        .library(name: "ConductorReports", targets: ["ConductorReports"]),
        .library(name: "ConductorURLSession", targets: ["ConductorURLSession"]),
        // A server's transport, a product of its own: an app that depends on `Conductor` alone
        // never compiles SwiftNIO or AsyncHTTPClient (scripts/consumer-check proves it in CI).
        .library(name: "ConductorAsyncHTTPClient", targets: ["ConductorAsyncHTTPClient"]),
        .library(name: "ConductorTestKit", targets: ["ConductorTestKit"]),
        // Servers: the launcher and the request gate as swift-service-lifecycle services. A
        // separate product, so an app that uses only `Conductor` never builds service-lifecycle.
        .library(name: "ConductorServiceLifecycle", targets: ["ConductorServiceLifecycle"]),
        // A durable job queue on SQLite (through GRDB), a product of its own: an app that does
        // not import it compiles neither it nor GRDB; the umbrella does not re-export it.
        .library(name: "ConductorJobs", targets: ["ConductorJobs"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.3.0"),
        // Spans and metrics: through the ecosystem's APIs, to whatever backend the app bootstraps.
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.5.0"),
        // Only for the ConductorAsyncHTTPClient product. 1.37 because the transport reads the
        // client's tracer (`HTTPClient.tracer`, new in 1.37) to keep one `traceparent` per request.
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.81.0"),
        // Test-only: a real HTTP server on loopback for the request gate's tests.
        .package(url: "https://github.com/swhitty/FlyingFox", from: "0.20.0"),
        // Build-only: `swift package generate-documentation` builds the DocC catalog; nothing
        // of it links into a product.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        // ConductorServiceLifecycle only.
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.0.0"),
        // ConductorJobs only: SQLite access (on Linux it links the system SQLite, libsqlite3-dev).
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    ],
    targets: [
        // What every area stands on: locks, settlements, clocks, journals, telemetry. Not a
        // product; its few public types reach users through the areas that re-export it.
        .target(
            name: "ConductorCore",
            dependencies: [
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "HeapModule", package: "swift-collections"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]
        ),
        .target(
            name: "ConductorGraph",
            dependencies: [
                "ConductorCore",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Instrumentation", package: "swift-distributed-tracing"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]
        ),
        .target(
            name: "ConductorLaunch",
            dependencies: [
                "ConductorCore", "ConductorGraph",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]
        ),
        // One thread-local pointer in C, which Swift cannot declare: the harmonizer registry's
        // per-thread lookup cache, found with a load instead of a `pthread_getspecific` call.
        .target(name: "ConductorThreadSlot"),
        .target(
            name: "ConductorHarmonizer",
            dependencies: [
                "ConductorCore",
                "ConductorThreadSlot",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]
        ),
        .target(
            name: "ConductorAssembly",
            dependencies: ["ConductorCore", .product(name: "DequeModule", package: "swift-collections")]
        ),
        .target(
            name: "ConductorGate",
            dependencies: [
                "ConductorCore",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Instrumentation", package: "swift-distributed-tracing"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]
        ),
        .target(
            name: "ConductorReports",
            dependencies: ["ConductorCore", "ConductorGraph", "ConductorLaunch"]
        ),
        // The umbrella: re-exports every area, and holds the DocC catalog.
        .target(
            name: "Conductor",
            dependencies: [
                "ConductorGraph", "ConductorLaunch", "ConductorHarmonizer", "ConductorAssembly",
                "ConductorGate", "ConductorReports",
            ]
        ),
        .target(
            name: "ConductorURLSession",
            dependencies: [
                "ConductorGate",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "HTTPTypesFoundation", package: "swift-http-types"),
            ]
        ),
        .target(
            name: "ConductorAsyncHTTPClient",
            dependencies: [
                "ConductorGate",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Instrumentation", package: "swift-distributed-tracing"),
            ]
        ),
        .target(
            name: "ConductorTestKit",
            // HTTPTypes for `FaultInjectingTransport`; Conductor depends on it already.
            dependencies: [
                "Conductor", "ConductorCore", .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        .testTarget(
            name: "ConductorTests",
            dependencies: [
                "Conductor",
                "ConductorCore",
                "ConductorGraph",
                "ConductorLaunch",
                "ConductorHarmonizer",
                "ConductorAssembly",
                "ConductorGate",
                "ConductorReports",
                "ConductorTestKit",
                "ConductorURLSession",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "FlyingFox", package: "FlyingFox"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ]
        ),
        // A target of its own, so `ConductorTests` (and a build that needs only it) does not
        // wait for SwiftNIO and AsyncHTTPClient.
        .testTarget(
            name: "ConductorAsyncHTTPClientTests",
            dependencies: [
                "Conductor",
                "ConductorCore",
                "ConductorGate",
                "ConductorTestKit",
                "ConductorAsyncHTTPClient",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "FlyingFox", package: "FlyingFox"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Instrumentation", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ]
        ),
        .target(
            name: "ConductorServiceLifecycle",
            dependencies: [
                "ConductorLaunch",
                "ConductorGate",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "ConductorServiceLifecycleTests",
            dependencies: [
                "Conductor",
                "ConductorCore",
                "ConductorGraph",
                "ConductorLaunch",
                "ConductorGate",
                "ConductorServiceLifecycle",
                "ConductorTestKit",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        .target(
            name: "ConductorJobs",
            dependencies: [
                "ConductorGraph",
                "ConductorCore",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "ConductorJobsTests",
            dependencies: [
                "Conductor",
                "ConductorCore",
                "ConductorGraph",
                "ConductorJobs",
                "ConductorTestKit",
                "ConductorGate",
                "ConductorURLSession",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "FlyingFox", package: "FlyingFox"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                // Built before the tests, which start it as a child process and kill it.
                "conductor-jobs-crash-child",
            ]
        ),
        // The job queue's crash tests' child process: enqueues orders and places them through a
        // request gate until the test kills it. Not a product; in Tests/, beside its test.
        .executableTarget(
            name: "conductor-jobs-crash-child",
            dependencies: [
                "ConductorCore", "ConductorGate", "ConductorJobs", "ConductorURLSession",
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            path: "Tests/ConductorJobsCrashChild"
        ),
        // XCTest only: the test kit used as an XCTest target uses it, with no Swift Testing imported.
        .testTarget(
            name: "ConductorTestKitXCTests",
            dependencies: ["Conductor", "ConductorTestKit"]
        ),
    ]
)

for target in package.targets where target.name != "ConductorThreadSlot" {
    var settings = target.swiftSettings ?? []
    settings.append(contentsOf: [
        .swiftLanguageMode(.v6),
        .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("MemberImportVisibility"),
        .enableUpcomingFeature("InternalImportsByDefault"),
    ])
    target.swiftSettings = settings
}
