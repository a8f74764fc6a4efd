import Conductor
import ConductorTestKit
import HTTPTypes
import Synchronization
import Testing

/// Every slot an attempt takes is given back, whichever way the attempt ends.
@Suite(.timeLimit(.minutes(1)))
struct GateSlotTests {
    /// Answers 401 to the first request and cancels the task that sent it before returning, so
    /// the rejection's transition finds its task cancelled; 200 to the rest.
    final class CancelsOnFirstRejection: GateTransport {
        private let sends = Atomic(0)

        func send(_ request: HTTPRequest, body: GateRequestBody?) async throws -> GateTransportResponse {
            if sends.wrappingAdd(1, ordering: .relaxed).oldValue == 0 {
                withUnsafeCurrentTask { $0?.cancel() }
                return GateTransportResponse(response: HTTPResponse(status: .unauthorized), body: [])
            }
            return GateTransportResponse(response: HTTPResponse(status: .ok), body: [])
        }
    }

    /// The regression: a rejection whose task was cancelled just before its transition kept the
    /// one slot, so with a limit of 1 every later request (and any refresh) waited forever.
    @Test func aRejectionCancelledBeforeItsTransitionGivesItsSlotBack() async throws {
        let gate = try RequestGate<String>(
            transport: CancelsOnFirstRejection(),
            credential: "t1",
            configuration: GateConfiguration(maxConcurrentRequests: 1, jitterSeed: 1),
            clock: ManualClock(),
            authorize: { request, token in request.headerFields[.authorization] = "Bearer \(token)" },
            refresh: { _ in "t2" }
        )
        let first = HTTPRequest(method: .get, scheme: "https", authority: "x.test", path: "/first")
        let error = await #expect(throws: GateError.self) { try await gate.send(first) }
        #expect(error?.code == .cancelled)
        let second = HTTPRequest(method: .get, scheme: "https", authority: "x.test", path: "/second")
        let reply = try await gate.send(second)
        #expect(reply.response.status == .ok)
        gate.shutdown()
    }

    // MARK: - A cancelled request's rejection

    /// Answers 401 to the first request and cancels the task that sent it before returning;
    /// 200 to a request that carries `valid`, 401 to any other.
    final class CancelsOnFirstRejectionThenChecks: GateTransport {
        private let sends = Atomic(0)
        let valid: String

        init(valid: String) { self.valid = valid }

        func send(_ request: HTTPRequest, body: GateRequestBody?) async throws -> GateTransportResponse {
            if sends.wrappingAdd(1, ordering: .relaxed).oldValue == 0 {
                withUnsafeCurrentTask { $0?.cancel() }
                return GateTransportResponse(response: HTTPResponse(status: .unauthorized), body: [])
            }
            let accepted = request.headerFields[.authorization] == valid
            return GateTransportResponse(response: HTTPResponse(status: accepted ? .ok : .unauthorized), body: [])
        }
    }

    /// A request whose 401 comes back after its task was cancelled (its last caller left)
    /// still starts the refresh that rejection calls for — on its last allowed attempt too: the
    /// credential is known bad, so the next request goes out with the new one instead of
    /// carrying the rejected one to the server again. One refresh, started by the cancelled
    /// request.
    @Test(arguments: [1, 3])
    func aCancelledRequestsRejectionStillStartsItsRefresh(maxAttempts: Int) async throws {
        let refreshes = Atomic(0)
        let gate = try RequestGate<String>(
            transport: CancelsOnFirstRejectionThenChecks(valid: "Bearer t2"),
            credential: "t1",
            configuration: GateConfiguration(
                retry: .automatic(.attempts(maxAttempts, backoff: .milliseconds(200))), jitterSeed: 1),
            clock: ManualClock(),
            authorize: { request, token in request.headerFields[.authorization] = "Bearer \(token)" },
            refresh: { _ in
                refreshes.add(1, ordering: .relaxed)
                return "t2"
            }
        )
        let first = HTTPRequest(method: .get, scheme: "https", authority: "x.test", path: "/first")
        let error = await #expect(throws: GateError.self) { try await gate.send(first) }
        // Its last allowed attempt was rejected: its budget is spent, as before.
        #expect(error?.code == (maxAttempts == 1 ? .retriesExhausted : .cancelled))
        let second = HTTPRequest(method: .get, scheme: "https", authority: "x.test", path: "/second")
        let reply = try await gate.send(second)
        #expect(reply.response.status == .ok)
        #expect(refreshes.load(ordering: .relaxed) == 1)
        let events = gate.recordedEvents
        #expect(events.contains(.refreshStarted(fromVersion: 1, request: 0)))
        // The second request never carried the rejected credential.
        #expect(events.contains(.running(request: 1, attempt: 1, credentialVersion: 2)))
        #expect(!events.contains(.running(request: 1, attempt: 1, credentialVersion: 1)))
        gate.shutdown()
    }
}
