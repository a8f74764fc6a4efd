// The complete example of the "Servers" article (Sources/Conductor/Documentation.docc/Servers.md).
// It is compiled with the tests and run by `serversArticleExampleRuns` below, so the article's
// code cannot drift from the API. Keep the two in step.

import Conductor
import ConductorServiceLifecycle
import ConductorTestKit
import HTTPTypes
import Logging
import ServiceLifecycle
import Testing
import UnixSignals

// MARK: - The example

/// Stand-ins for what a real server opens at start-up.
actor DatabasePool {
    private(set) var isOpen = false
    /// The tests' hook: what opening waits for (nothing by default).
    private let connect: @Sendable () async throws -> Void

    init(connect: @escaping @Sendable () async throws -> Void = {}) {
        self.connect = connect
    }

    func open() async throws {
        try await connect()
        isOpen = true
    }

    func close() async { isOpen = false }
}

actor ConfigStore {
    private(set) var isLoaded = false
    func load() async throws { isLoaded = true }
}

/// The app's HTTP server (Hummingbird, Vapor…): starts serving once the launch has completed.
struct HTTPServer: Service {
    let startup: LauncherService
    let serving = Latch()

    func run() async throws {
        // false: the group shut down during the launch; throws if a required task failed
        guard try await startup.launched() else { return }
        serving.open()
        // … accept connections until graceful shutdown …
        try? await gracefulShutdown()
    }
}

/// Builds the server's service group: the start-up tasks, the request gate for the calls it
/// makes to another service, and the HTTP server.
func makeServiceGroup(
    database: DatabasePool, config: ConfigStore, transport: some GateTransport, logger: Logger
) throws -> (ServiceGroup, HTTPServer) {
    let launcher = Launcher("server", undoTimeout: .seconds(10), logger: logger)
    try launcher.add(ClosureStartupTask("config") { try await config.load() })
    try launcher.add(
        ClosureStartupTask("database", run: { try await database.open() }, undo: { await database.close() }))
    let startup = LauncherService(launcher, logger: logger)

    let gate = try RequestGate<String>(
        transport: transport,
        logger: logger,
        authorize: { request, token in request.headerFields[.authorization] = "Bearer \(token)" },
        refresh: { _ in "token" }  // fetch a real token here
    )
    let server = HTTPServer(startup: startup)

    // Services shut down gracefully in the reverse of this order, each once the one after it
    // has returned: the server stops taking requests first, then the gate ends what is still
    // pending, then the launcher undoes its tasks (the database closes last). So the gate is
    // listed before the services that send through it, and the launcher before them all.
    let group = ServiceGroup(
        configuration: ServiceGroupConfiguration(
            services: [
                .init(service: startup),
                .init(service: RequestGateService(gate)),
                .init(service: server),
            ],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger
        )
    )
    return (group, server)
}

// MARK: - Run in CI

@Suite(.timeLimit(.minutes(1))) struct ServersArticleExampleTests {
    /// A transport that answers every request with 200 and no body.
    struct AnsweringTransport: GateTransport {
        func send(_ request: HTTPRequest, body: GateRequestBody?) async throws -> GateTransportResponse {
            GateTransportResponse(response: HTTPResponse(status: .ok), body: [])
        }
    }

    @Test func serversArticleExampleRuns() async throws {
        let database = DatabasePool()
        let config = ConfigStore()
        let (group, server) = try makeServiceGroup(
            database: database, config: config, transport: AnsweringTransport(),
            logger: Logger.quiet)
        let running = Task { try await group.run() }
        await server.serving.wait()
        #expect(await database.isOpen)
        #expect(await config.isLoaded)

        await group.triggerGracefulShutdown()
        try await running.value
        #expect(await !database.isOpen)
    }

    /// SIGTERM while the database still opens (8 s, on a clock the test never moves): the
    /// server, waiting in `launched()`, hears it first and cancels the launch; it never
    /// serves; the group's `run()` returns without error (so without the 8 s); config, which
    /// had succeeded, is undone.
    @Test func aShutdownDuringTheLaunchCancelsItAndTheServerNeverServes() async throws {
        let clock = ManualClock()
        let opening = Latch()
        let database = DatabasePool(connect: {
            opening.open()
            try await clock.sleep(for: .seconds(8))
        })
        let (group, server) = try makeServiceGroup(
            database: database, config: ConfigStore(), transport: AnsweringTransport(), logger: Logger.quiet)
        let running = Task { try await group.run() }
        await opening.wait()

        await group.triggerGracefulShutdown()
        try await running.value
        #expect(!server.serving.isOpen)
        #expect(await !database.isOpen)
        let report = try await server.startup.launcher.report()
        #expect(report.outcome == .cancelled)
        #expect(report["config"]?.outcome.isSuccess == true)
        #expect(report["database"]?.outcome.isSuccess == false)
        #expect(report.shutdown?.undos.map(\.task) == ["config"])
        #expect(report.shutdown?.isSuccess == true)
    }
}
