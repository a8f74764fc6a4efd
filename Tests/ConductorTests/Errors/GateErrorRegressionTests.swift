import Conductor
import ConductorTestKit
import HTTPTypes
import Testing

/// Gate misuse that crashed, and an error that named the wrong culprit, before they were fixed.
@Suite struct GateErrorRegressionTests {
    static func get(_ path: String) -> HTTPRequest {
        HTTPRequest(method: .get, scheme: "https", authority: "example.test", path: path)
    }

    /// `PriorityScheduler(maxConcurrent: 0)` and `agingThreshold: 0` hit a precondition.
    @Test func aSchedulerWithAZeroLimitAndThresholdRunsWorkInsteadOfCrashing() async throws {
        for limit in [0, -3] {
            let scheduler = PriorityScheduler(maxConcurrent: limit, agingThreshold: limit)
            #expect(try await scheduler.run { 42 } == 42)
        }
    }

    /// The same precondition, reached through a gate's configuration.
    @Test func aGateWithAZeroConcurrencyLimitSendsInsteadOfCrashing() async throws {
        let transport = MemoryTransport(validToken: "t0")
        let gate = RequestGate(
            transport: transport,
            credential: "t0",
            configuration: GateConfiguration(maxConcurrentRequests: 0, agingThreshold: 0),
            authorize: { request, token in request.headerFields[.authorization] = "Bearer \(token)" },
            refresh: { _ in "t1" }
        )
        #expect(try await gate.send(Self.get("/feed")).response.status == .ok)
    }

    /// Requests pending at shutdown, and sent after it, were told "the gate: the gate was shut
    /// down", with `request == "the gate"` instead of their own method and path.
    @Test func shutDownNamesEachRequestRatherThanTheGate() async throws {
        let refreshing = Latch()
        let (started, refreshStarted) = AsyncStream<Void>.makeStream()
        let gate = RequestGate<String>(
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
