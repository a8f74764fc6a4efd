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
    func open() async throws { isOpen = true }
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
        try await startup.launched()  // throws if a required start-up task failed
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

    // Services shut down gracefully in the reverse of this order: the server stops taking
    // requests first, then the gate ends what is still pending, then the launcher undoes
    // its tasks (the database closes last).
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
        func send(_ request: HTTPRequest, body: RequestBody?) async throws -> (HTTPResponse, [UInt8]) {
            (HTTPResponse(status: .ok), [])
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
}
