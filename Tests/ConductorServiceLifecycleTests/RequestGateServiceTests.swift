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

        func send(_ request: HTTPRequest, body: GateRequestBody?) async throws -> GateTransportResponse {
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

    fileprivate static func send(through gate: RequestGate<String>) async -> Result<GateResponse, GateError> {
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

    /// A transport that answers 200 once `answer` opens, after saying it was reached.
    private struct SlowTransport: GateTransport {
        let reached: Latch
        let answer: Latch

        func send(_ request: HTTPRequest, body: GateRequestBody?) async throws -> GateTransportResponse {
            reached.open()
            await answer.wait()
            return GateTransportResponse(response: HTTPResponse(status: .ok), body: [])
        }
    }

    /// A service that sends one request through the gate and, shut down gracefully, finishes
    /// it before it returns; `shutdownHeard` opens when the group tells it to shut down.
    private struct Sender: Service {
        let gate: RequestGate<String>
        let result = Recorder<Result<GateResponse, GateError>>()
        let shutdownHeard = Latch()

        func run() async throws {
            let shutdownHeard = self.shutdownHeard
            let response = await withGracefulShutdownHandler {
                await RequestGateServiceTests.send(through: gate)
            } onGracefulShutdown: {
                shutdownHeard.open()
            }
            result.append(response)
            try? await gracefulShutdown()
            shutdownHeard.open()
        }
    }

    /// The documented order, the gate listed before the service that sends through it: on
    /// graceful shutdown the sender is told first and finishes its request in flight (answered
    /// only once the sender has heard the shutdown), and only then does the gate shut down.
    /// Listed the other way round, the gate shuts down before the sender hears anything, and
    /// that request ends with `shutDown`.
    @Test func theGateListedBeforeItsSendersLetsThemFinishTheirRequests() async throws {
        let reached = Latch()
        let answer = Latch()
        let gate = try RequestGate<String>(
            transport: SlowTransport(reached: reached, answer: answer), credential: "token",
            authorize: { request, token in request.headerFields[.authorization] = "Bearer \(token)" },
            refresh: { _ in "token" })
        let sender = Sender(gate: gate)
        let group = ServiceGroup(services: [RequestGateService(gate), sender], logger: Logger.quiet)
        let running = Task { try await group.run() }
        await reached.wait()

        await group.triggerGracefulShutdown()
        await sender.shutdownHeard.wait()
        answer.open()
        try await running.value
        let results = sender.result.all
        #expect(results.count == 1)
        if case .failure(let error) = results.first {
            Issue.record("the request in flight should have been answered, not \(error)")
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
