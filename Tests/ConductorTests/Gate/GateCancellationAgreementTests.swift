import Conductor
import ConductorTestKit
import HTTPTypes
import Testing

/// A cancellation racing a response is decided once: whichever wins, the caller's result and
/// the request's end event in the journal (which the metrics and the span are made from) say
/// the same thing.
///
/// Before, a caller cancelled while its flight was being settled threw `cancelled` although the
/// journal recorded `success 200` for the same request (2 of 12,000 callers in 24 rounds).
@Suite(.timeLimit(.minutes(3)))
struct GateCancellationAgreementTests {
    static let seeds = StressConfiguration.seeds(default: 24, base: 0x3B_CA9C)

    /// Hands each send back to the scheduler a few times, as a network would, so that callers'
    /// cancellations land while responses come back.
    struct Yielding: GateTransport {
        let base: MemoryTransport

        func send(_ request: HTTPRequest, body: GateRequestBody?) async throws -> GateTransportResponse {
            let reply = try await base.send(request, body: body)
            for _ in 0..<((request.path?.count ?? 0) % 4) { await Task.yield() }
            return reply
        }
    }

    /// What a caller got, in the journal's terms.
    enum Outcome: Equatable, CustomStringConvertible {
        case success(Int)
        case failure(GateError.Code)

        var description: String {
            switch self {
            case .success(let status): "success \(status)"
            case .failure(let code): "failure \(code)"
            }
        }
    }

    /// 250 requests, the credential expiring after the first 100 are under way, and about one
    /// caller in ten cancelled after a seeded number of yields: each caller's result must be
    /// its request's end event.
    @Test(arguments: seeds)
    func aCallersResultIsItsRequestsEndEvent(seed: UInt64) async throws {
        var generator = SeededGenerator(seed: seed)
        let authority = MemoryAuthority(transport: MemoryTransport(validToken: "t0"))
        var configuration = GateConfiguration(jitterSeed: seed, eventRetention: 100_000)
        configuration.retry.schedule = .attempts(3, backoff: .zero, maxBackoff: .zero)
        let gate = try RequestGate<String>(
            transport: Yielding(base: authority.transport), credential: "t0", configuration: configuration,
            clock: ManualClock(),
            authorize: { request, token in request.headerFields[.authorization] = "Bearer \(token)" },
            refresh: { _ in try authority.refresh() })
        // Small enough that a stress run's 300 seeds at once fit their time limit under the
        // thread sanitizer on two cores.
        let count = 250
        let cancelAfter: [Int?] = (0..<count).map { _ in
            Int.random(in: 0..<10, using: &generator) == 0 ? Int.random(in: 0..<24, using: &generator) : nil
        }
        let results = await withTaskGroup(of: (Int, Outcome).self) { group in
            for index in 0..<count {
                if index == 100 { authority.expire() }
                let caller = Task { () -> Outcome in
                    let request = HTTPRequest(
                        method: .get, scheme: "https", authority: "example.test", path: "/r/\(index)")
                    do throws(GateError) {
                        return .success(try await gate.send(request).response.status.code)
                    } catch {
                        return .failure(error.code)
                    }
                }
                if let yields = cancelAfter[index] {
                    group.addTask {
                        for _ in 0..<yields { await Task.yield() }
                        caller.cancel()
                        return (index, await caller.value)
                    }
                } else {
                    group.addTask { (index, await caller.value) }
                }
            }
            var results: [Int: Outcome] = [:]
            for await (index, outcome) in group { results[index] = outcome }
            return results
        }

        // The journal's end event for each request, found by its path.
        let events = gate.recordedEvents
        var idsByPath: [String: UInt64] = [:]
        for case .initial(let id, let name, _) in events { idsByPath[name] = id }
        var ends: [UInt64: Outcome] = [:]
        for event in events {
            switch event {
            case .success(let id, let status): ends[id] = .success(status)
            case .failure(let id, let code): ends[id] = .failure(code)
            default: break
            }
        }
        var disagreements: [String] = []
        for index in 0..<count {
            let caller = results[index]
            guard let id = idsByPath["GET /r/\(index)"] else {
                // Cancelled before the gate opened a flight: nothing was journaled.
                if caller != Outcome.failure(.cancelled) {
                    disagreements.append("#\(index): \(String(describing: caller))")
                }
                continue
            }
            if caller != ends[id] {
                disagreements.append(
                    "#\(index): caller \(String(describing: caller)), journal \(String(describing: ends[id]))")
            }
        }
        #expect(disagreements.isEmpty, "seed \(seed): \(disagreements.prefix(5))")
        #expect(results.count == count)
    }
}
