import Conductor
import ConductorTestKit
import ConductorURLSession
import Foundation
import HTTPTypes
import Synchronization
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The gate's invariants against the real loopback server in its fault mode: latency, 401s,
/// 429s with `Retry-After`, 500s, dropped connections and slow bodies, drawn from a seed.
// Serialized: at stress sizes, hundreds of cases at once would share two threads and
// each case's time limit would measure the crowd, not the case.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct GateServerFaultTests {
    static let seeds = StressConfiguration.seeds(default: 3, base: 0xF1F0_0001)

    @Test(arguments: seeds)
    func invariantsHoldAgainstAFaultyServer(seed: UInt64) async throws {
        var generator = SeededGenerator(seed: seed)
        let faults = TokenServer.Faults(
            seed: seed,
            latencyMilliseconds: 0...20,
            unauthorized: 0.1,
            tooManyRequests: 0.1,
            retryAfterSeconds: [0, 5],
            serverError: 0.1,
            drop: 0.1,
            slowBody: 0.1
        )
        let server = try await TokenServer.start(faults: faults)
        var configuration = GateConfiguration(
            maxConcurrentRequests: Int.random(in: 1...6, using: &generator),
            retry: .automatic(
                .attempts(4, backoff: .milliseconds(5), maxBackoff: .milliseconds(20)),
                retryAfter: .honoured(upTo: .seconds(1))),
            jitterSeed: seed,
            eventRetention: 100_000
        )
        // Refreshes without bound: the window has tests of its own, and here every refresh a
        // rejection asks for is checked against the invariant.
        configuration.refreshWindow = nil
        let (gate, finishSession) = try server.gate(configuration)
        defer { finishSession() }
        let ledger = OutcomeLedger<Int>()
        let count = 24
        var callers: [Task<Void, Never>] = []
        for index in 0..<count {
            ledger.expect(index)
            let priority = [RequestPriority.low, .default, .high].randomElement(using: &generator)!
            callers.append(
                Task {
                    do {
                        let reply = try await gate.send(
                            GateServerTests.request(server, "/data/\(index)", tag: "\(index)"), priority: priority)
                        ledger.record(index, "status \(reply.response.status.code)")
                    } catch {
                        ledger.record(index, (error as? GateError).map { "\($0.code)" } ?? "\(error)")
                    }
                })
            if Int.random(in: 0..<8, using: &generator) == 0 { callers.last!.cancel() }
        }
        guard await awaitAll(callers) else {
            let open = (0..<count).filter { ledger.outcome(of: $0) == nil }
            Issue.record(
                "seed \(seed): requests \(open) never ended; the gate's last events: \(gate.recordedEvents.suffix(20))")
            gate.shutdown()
            await server.stop()
            return
        }
        await RefreshInvariant.settle(gate)
        for violation in ledger.violations { Issue.record("seed \(seed): \(violation)") }
        let allowed = ["status 200", "refreshFailed", "cancelled", "retriesExhausted", "transport", "timedOut"]
        for index in 0..<count {
            let outcome = ledger.outcome(of: index) ?? "none"
            #expect(allowed.contains(outcome), "seed \(seed): request \(index) ended with \(outcome)")
        }
        let events = gate.recordedEvents
        RefreshInvariant.check(
            events, startVersion: 1, credentialVersion: gate.credentialVersion, tokensIssued: server.tokensIssued,
            context: "seed \(seed)")
        // Every success was last sent with the newest token.
        for index in 0..<count where ledger.outcome(of: index) == "status 200" {
            let last = server.hits.last { $0.requestTag == "\(index)" }
            #expect(
                last != nil && last?.token == last?.newest,
                "seed \(seed): request \(index) last sent with \(String(describing: last))")
        }
        // Nothing loops: attempts per request stay within the budget.
        var attempts: [UInt64: Int] = [:]
        for case .running(let id, _, _) in events { attempts[id, default: 0] += 1 }
        #expect(
            attempts.values.allSatisfy { $0 <= configuration.retry.schedule.maxAttempts }, "seed \(seed): \(attempts)")
        gate.shutdown()
        await server.stop()
    }
}
