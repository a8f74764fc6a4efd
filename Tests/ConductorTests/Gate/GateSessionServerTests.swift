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

/// The races of ``GateSessionPropertyTests`` against the real loopback server in its fault mode (latency, 401s, 429s,
/// 500s, dropped connections and slow bodies on `/data/*`), in real time. A script of sends
/// (some to `/public/*`, anonymous), logins (an anonymous `POST /login` through the gate, then
/// `signIn` with its token), sign-outs and expiries runs in order; between steps the script
/// may wait for the next request to end (a journal event), so operations land while requests
/// are on the wire, parked or queued.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct GateSessionServerTests {
    static let seeds = StressConfiguration.seeds(default: 3, base: 0x5E55_F001)

    enum Step {
        case send(anonymous: Bool, priority: RequestPriority)
        case signIn
        case signOut
        case expire
        case awaitAnEnd
    }

    @Test(arguments: seeds)
    func signInSignOutAndRefreshRacesAgainstAFaultyServer(seed: UInt64) async throws {
        var generator = SeededGenerator(seed: seed)
        let faults = TokenServer.Faults(
            seed: seed, latencyMilliseconds: 0...15, unauthorized: 0.1, tooManyRequests: 0.05,
            retryAfterSeconds: [0], serverError: 0.05, drop: 0.05, slowBody: 0.05)
        let server = try await TokenServer.start(faults: faults)
        var configuration = GateConfiguration(
            maxConcurrentRequests: Int.random(in: 1...6, using: &generator),
            retry: .automatic(
                .attempts(5, backoff: .milliseconds(2), maxBackoff: .milliseconds(10)),
                retryAfter: .honoured(upTo: .seconds(1))),
            jitterSeed: seed,
            eventRetention: 100_000
        )
        // Refreshes without bound: the window has tests of its own, and here every refresh the
        // races ask for is checked against the invariant (a stress run's seeds hit the default
        // window's five in 30 s).
        configuration.refreshWindow = nil
        let (gate, finishSession) = try server.gate(configuration)
        defer { finishSession() }
        let steps: [Step] = (0..<Int.random(in: 16...28, using: &generator)).map { _ in
            switch Int.random(in: 0..<20, using: &generator) {
            case 0..<2: .signIn
            case 2: .signOut
            case 3..<5: .expire
            case 5..<9: .awaitAnEnd
            default:
                .send(
                    anonymous: Int.random(in: 0..<4, using: &generator) == 0,
                    priority: [.low, .default, .high].randomElement(using: &generator)!)
            }
        }
        let ledger = OutcomeLedger<Int>()
        var requests: [(index: Int, anonymous: Bool)] = []
        var callers: [Task<Void, Never>] = []
        var events = gate.events.makeAsyncIterator()
        var endsConsumed = 0
        for (index, step) in steps.enumerated() {
            switch step {
            case .send(let anonymous, let priority):
                ledger.expect(index)
                requests.append((index, anonymous))
                let path = anonymous ? "/public/\(index)" : "/data/\(index)"
                callers.append(
                    Task {
                        do {
                            let reply = try await gate.send(
                                GateServerTests.request(server, path, tag: "\(index)"), priority: priority,
                                authorization: anonymous ? .anonymous : .required)
                            ledger.record(index, "status \(reply.response.status.code)")
                        } catch {
                            ledger.record(index, (error as? GateError).map { "\($0.code)" } ?? "\(error)")
                            if anonymous { Issue.record("seed \(seed): anonymous request \(index): \(error)") }
                        }
                    })
            case .signIn:
                // The login call itself needs no credential, and is a request like any other.
                ledger.expect(index)
                requests.append((index, true))
                let login = HTTPRequest(method: .post, scheme: "http", authority: server.authority, path: "/login")
                do {
                    let reply = try await gate.send(login, body: .bytes([]), authorization: .anonymous)
                    ledger.record(index, "status \(reply.response.status.code)")
                    gate.signIn(String(decoding: reply.body, as: UTF8.self))
                } catch {
                    ledger.record(index, "\(error.code)")
                    Issue.record("seed \(seed): login \(index): \(error)")
                }
            case .signOut:
                gate.signOut()
            case .expire:
                server.expireToken()
            case .awaitAnEnd:
                // Suspends on the journal until one more flight has ended, if any is open.
                let snapshot = gate.recordedEvents
                let opened = snapshot.count { if case .initial = $0 { true } else { false } }
                let ended = snapshot.count(where: Self.isEnd)
                guard opened > ended else { continue }
                while endsConsumed <= ended, let event = await events.next() {
                    if Self.isEnd(event) { endsConsumed += 1 }
                }
            }
        }
        guard await awaitAll(callers) else {
            let open = requests.map(\.index).filter { ledger.outcome(of: $0) == nil }
            Issue.record(
                "seed \(seed): requests \(open) never ended; the gate's last events: \(gate.recordedEvents.suffix(20))")
            gate.shutdown()
            await server.stop()
            return
        }
        await RefreshInvariant.settle(gate)
        let context = "seed \(seed)"
        SessionChecks.check(
            ledger: ledger, requests: requests, events: gate.recordedEvents, startVersion: 1,
            credentialVersion: gate.credentialVersion, refreshesIssued: server.tokensIssued, context: context,
            allowedFailures: [.signedOut, .refreshFailed, .refreshTimedOut, .retriesExhausted, .transport, .timedOut])
        for hit in server.publicHits {
            #expect(hit.token == nil, "\(context): \(hit.path) carried \(hit.token ?? "")")
        }
        for (index, anonymous) in requests where !anonymous && ledger.outcome(of: index) == "status 200" {
            let last = server.hits.last { $0.requestTag == "\(index)" }
            #expect(
                last != nil && last?.token == last?.newest,
                "\(context): request \(index) last sent with \(String(describing: last))")
        }
        gate.shutdown()
        await server.stop()
    }

    static func isEnd(_ event: GateEvent) -> Bool {
        switch event {
        case .success, .failure, .useCache: true
        default: false
        }
    }
}
