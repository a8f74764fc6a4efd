import Conductor
import ConductorServiceLifecycle
import ConductorTestKit
import HTTPTypes
import Logging
import ServiceLifecycle
import ServiceLifecycleTestKit
import Testing

/// `RequestGateService`: a graceful shutdown shuts the gate down, ending each pending request
/// once.
@Suite(.timeLimit(.minutes(1))) struct RequestGateServiceTests {
    /// A transport whose every send waits until it is cancelled, after saying it was reached.
    private struct StalledTransport: GateTransport {
        let reached: Latch

        func send(_ request: HTTPRequest, body: RequestBody?) async throws -> (HTTPResponse, [UInt8]) {
            reached.open()
            let cancelled = Latch()
            await withTaskCancellationHandler {
                await cancelled.wait()
            } onCancel: {
                cancelled.open()
            }
            throw CancellationError()
        }
    }

    private func makeGate(reached: Latch) throws -> RequestGate<String> {
        try RequestGate<String>(
            transport: StalledTransport(reached: reached), credential: "token",
            authorize: { request, token in request.headerFields[.authorization] = "Bearer \(token)" },
            refresh: { _ in "token" })
    }

    private static func send(through gate: RequestGate<String>) async -> Result<GateResponse, GateError> {
        do throws(GateError) {
            return .success(try await gate.send(request))
        } catch {
            return .failure(error)
        }
    }

    private static let request = HTTPRequest(method: .get, scheme: "https", authority: "example.com", path: "/feed")

    /// A request on the wire when graceful shutdown comes ends with `shutDown`, and a later one
    /// is refused the same way.
    @Test func gracefulShutdownEndsThePendingRequestsOnce() async throws {
        let reached = Latch()
        let gate = try makeGate(reached: reached)
        try await testGracefulShutdown { trigger in
            let service = RequestGateService(gate)
            let running = Task { try await service.run() }
            let pending = Task { await Self.send(through: gate) }
            await reached.wait()
            trigger.triggerGracefulShutdown()
            try await running.value
            guard case .failure(let error) = await pending.value else {
                Issue.record("the pending request should have ended with an error")
                return
            }
            #expect(error.code == .shutDown)
        }
        let late = await #expect(throws: GateError.self) { try await gate.send(Self.request) }
        #expect(late?.code == .shutDown)
    }

    /// In a group: the gate is shut down when the group shuts down gracefully.
    @Test func theGroupShutsTheGateDown() async throws {
        let reached = Latch()
        let gate = try makeGate(reached: reached)
        let group = ServiceGroup(services: [RequestGateService(gate)], logger: Logger.quiet)
        let running = Task { try await group.run() }
        let pending = Task { await Self.send(through: gate) }
        await reached.wait()
        await group.triggerGracefulShutdown()
        try await running.value
        guard case .failure(let error) = await pending.value else {
            Issue.record("the pending request should have ended with an error")
            return
        }
        #expect(error.code == .shutDown)
    }
}
