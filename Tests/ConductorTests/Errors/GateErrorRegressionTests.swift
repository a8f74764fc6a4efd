import Conductor
import ConductorTestKit
import HTTPTypes
import Testing

/// Gate misuse that crashed, and an error that named the wrong culprit, before they were fixed.
@Suite struct GateErrorRegressionTests {
    static func get(_ path: String) -> HTTPRequest {
        HTTPRequest(method: .get, scheme: "https", authority: "example.test", path: path)
    }

    /// `PriorityScheduler(maxConcurrent: 0)` and `agingThreshold: 0` hit a precondition; then
    /// they were clamped to 1 without a word. Now the initializer throws, naming the value.
    @Test func aSchedulerWithAZeroLimitOrThresholdIsRefusedWhereItIsMade() throws {
        for limit in [0, -3] {
            let error = #expect(throws: SchedulerError.self) { try PriorityScheduler(maxConcurrent: limit) }
            #expect(error?.code == .invalidConfiguration)
            #expect(error?.message == "PriorityScheduler's maxConcurrent must be at least 1 (got \(limit))")
            let aging = #expect(throws: SchedulerError.self) { try PriorityScheduler(agingThreshold: limit) }
            #expect(aging?.message == "PriorityScheduler's agingThreshold must be at least 1 (got \(limit))")
        }
    }

    /// The same precondition, reached through a gate's configuration; then a silent clamp. Now
    /// creating the gate throws, naming the field.
    @Test func aGateWithAZeroConcurrencyLimitIsRefusedWhereItIsMade() throws {
        var configuration = GateConfiguration(maxConcurrentRequests: 0)
        let make = { (configuration: GateConfiguration) throws(GateError) in
            _ = try RequestGate(
                transport: MemoryTransport(validToken: "t0"),
                credential: "t0",
                configuration: configuration,
                authorize: { request, token in request.headerFields[.authorization] = "Bearer \(token)" },
                refresh: { _ in "t1" }
            )
        }
        let limit = #expect(throws: GateError.self) { try make(configuration) }
        #expect(limit?.code == .invalidConfiguration)
        #expect(limit?.message == "GateConfiguration.maxConcurrentRequests must be at least 1 (got 0)")
        configuration = GateConfiguration(agingThreshold: 0)
        let aging = #expect(throws: GateError.self) { try make(configuration) }
        #expect(aging?.message == "GateConfiguration.agingThreshold must be at least 1 (got 0)")
        configuration = GateConfiguration(retry: .automatic(.attempts(0, backoff: .milliseconds(200))))
        let attempts = #expect(throws: GateError.self) { try make(configuration) }
        #expect(attempts?.message == "GateConfiguration.retry.schedule.maxAttempts must be at least 1 (got 0)")
        configuration = GateConfiguration()
        configuration.refreshWindow = .init(maxRefreshes: 0, period: .seconds(1))
        let window = #expect(throws: GateError.self) { try make(configuration) }
        #expect(window?.message == "GateConfiguration.refreshWindow.maxRefreshes must be at least 1 (got 0)")
        configuration = GateConfiguration(refreshTimeout: .seconds(-1))
        let negative = #expect(throws: GateError.self) { try make(configuration) }
        #expect(negative?.code == .negativeDuration)
        #expect(negative?.message == "GateConfiguration.refreshTimeout is negative (-1.00 s)")
        #expect(negative?.request == nil)
    }

    /// Requests pending at shutdown, and sent after it, were told "the gate: the gate was shut
    /// down", with `request == "the gate"` instead of their own method and path.
    @Test func shutDownNamesEachRequestRatherThanTheGate() async throws {
        let refreshing = Latch()
        let (started, refreshStarted) = AsyncStream<Void>.makeStream()
        let gate = try RequestGate<String>(
            transport: MemoryTransport(validToken: nil),
            authorize: { request, token in request.headerFields[.authorization] = "Bearer \(token)" },
            refresh: { _ in
                refreshStarted.yield()
                await refreshing.wait()
                return "t1"
            }
        )
        let pending = Task { try await gate.send(Self.get("/pending")) }
        for await _ in started { break }
        gate.shutdown()
        let pendingError = await #expect(throws: GateError.self) { try await pending.value }
        #expect(pendingError?.message == "GET /pending: the gate was shut down")
        #expect(pendingError?.request == "GET /pending")
        let lateError = await #expect(throws: GateError.self) { try await gate.send(Self.get("/late")) }
        #expect(lateError?.message == "GET /late: the gate was shut down")
        #expect(lateError?.request == "GET /late")
        refreshing.open()
    }
}
