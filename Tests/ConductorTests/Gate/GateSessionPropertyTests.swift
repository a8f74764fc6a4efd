import Conductor
import ConductorTestKit
import HTTPTypes
import Testing

/// Sign-in, sign-out and refresh — started by a rejection, by a credential judged stale before
/// it is sent, or by `refresh()` — racing each other and a stream of requests, some of them
/// anonymous, on a `ManualClock` and an in-memory server with sessions. Every failure names
/// its seed; `CONDUCTOR_REPLAY=<seed> swift test --filter GateSessionPropertyTests` replays it.
///
/// What must hold, whatever the interleaving:
/// - every request ends exactly once: with a 200 sent with the newest credential, or with a
///   clear typed error (`signedOut`, `refreshFailed`, `retriesExhausted`);
/// - the refresh invariant (``RefreshInvariant``): nothing goes out with a version older than
///   the newest once its refresh started, nor with any credential while signed out, and a
///   stale refresh never overwrites a newer signed-in credential;
/// - anonymous requests carry no credential, never park, never trigger a refresh, and are
///   never failed by a sign-out.
// Serialized: at stress sizes, hundreds of cases at once would share two threads and each
// case's time limit would measure the crowd, not the case.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct GateSessionPropertyTests {
    static let seeds = StressConfiguration.seeds(default: 60, base: 0x5E55_0001)

    @Test(arguments: seeds)
    func signInSignOutAndRefreshRacesEndEveryRequestOnce(seed: UInt64) async throws {
        var generator = SeededGenerator(seed: seed)
        let script = SessionScript(using: &generator)
        let clock = ManualClock()
        let server = SessionServer(
            seed: seed, rates: script.rates, clock: clock, initialToken: script.startsSignedIn ? "s0" : nil)
        var configuration = GateConfiguration(
            maxConcurrentRequests: script.maxConcurrent,
            retry: .automatic(
                .attempts(script.maxAttempts, backoff: .milliseconds(50), maxBackoff: .milliseconds(400))),
            refreshTimeout: .seconds(3600),
            jitterSeed: seed,
            eventRetention: 1_000_000
        )
        // Refreshes without bound, as before the default window: every refresh the races ask
        // for is checked against the invariant (GatePropertyTests covers the window).
        configuration.refreshWindow = nil
        // The two triggers that start a refresh without a rejection race sign-in and sign-out
        // too: one seed in three judges the credential before each send (stale once the server
        // no longer accepts it, as an app that knows its expiry would), and another one in three
        // calls refresh() after each expiry (as an app back from the background would).
        var judge: (@Sendable (String, ManualClock.Instant) -> Bool)?
        if seed % 3 == 1 {
            judge = { token, _ in !server.accepts(token) }
        }
        let refreshesAfterExpiry = seed % 3 == 2
        let gate = try RequestGate<String>(
            transport: server,
            credential: script.startsSignedIn ? "s0" : nil,
            configuration: configuration,
            clock: clock,
            authorize: { request, token in request.headerFields[.authorization] = "Bearer \(token)" },
            requiresRefresh: judge,
            refresh: { _ in try await server.refresh() }
        )
        let ledger = OutcomeLedger<Int>()
        var tasks: [Task<Void, Never>] = []
        for (index, step) in script.steps.enumerated() {
            if case .send = step.action { ledger.expect(index) }
            tasks.append(
                Task {
                    guard (try? await clock.sleep(until: .init(offset: step.at))) != nil else {
                        if case .send = step.action { ledger.record(index, "driver cancelled") }
                        return
                    }
                    switch step.action {
                    case .send(let anonymous, let priority):
                        do {
                            let reply = try await gate.send(
                                HTTPRequest(
                                    method: .get, scheme: "https", authority: "session.test",
                                    path: SessionScript.path(index, anonymous: anonymous)),
                                priority: priority, authorization: anonymous ? .anonymous : .required)
                            ledger.record(index, "status \(reply.response.status.code)")
                        } catch {
                            ledger.record(index, (error as? GateError).map { "\($0.code)" } ?? "\(error)")
                        }
                    case .signIn: gate.signIn(server.signIn())
                    case .signOut: gate.signOut()
                    case .expire:
                        server.expire()
                        if refreshesAfterExpiry { _ = try? await gate.refresh() }
                    }
                })
        }
        let reachedTheEnd = try await RefreshInvariant.drive(
            tasks, gate: gate, clock: clock, seed: seed, stepMilliseconds: 10...120, maxSteps: 5_000)
        guard reachedTheEnd else {
            Issue.record("seed \(seed): the scenario had not settled after the driver's step budget")
            gate.shutdown()
            return
        }

        let context = "seed \(seed)"
        SessionChecks.check(
            ledger: ledger, requests: script.requests, events: gate.recordedEvents,
            startVersion: script.startsSignedIn ? 1 : 0, credentialVersion: gate.credentialVersion,
            refreshesIssued: server.refreshesIssued, context: context)
        // Server side: every authorized success was accepted, so sent with the newest
        // credential; anonymous requests never carried one.
        for send in server.sends where send.path.hasPrefix("/public/") {
            #expect(send.token == nil, "\(context): \(send.path) carried \(send.token ?? "")")
        }
        for (index, anonymous) in script.requests where !anonymous && ledger.outcome(of: index) == "status 200" {
            let last = server.sends.last { $0.path == SessionScript.path(index, anonymous: false) }
            #expect(
                last?.accepted == true && last?.token == last?.newest,
                "\(context): request \(index) succeeded, last sent as \(String(describing: last))")
        }
        gate.shutdown()
    }
}

/// One random script of the session property test, drawn from its seed.
struct SessionScript {
    enum Action {
        case send(anonymous: Bool, priority: RequestPriority)
        case signIn
        case signOut
        case expire
    }

    struct Step {
        var at: Duration
        var action: Action
    }

    var rates: SessionServer.Rates
    var maxConcurrent: Int?
    var maxAttempts: Int
    var startsSignedIn: Bool
    var steps: [Step]

    /// The sends, by step index, and whether each is anonymous.
    var requests: [(index: Int, anonymous: Bool)] {
        steps.enumerated().compactMap { index, step in
            if case .send(let anonymous, _) = step.action { (index, anonymous) } else { nil }
        }
    }

    static func path(_ index: Int, anonymous: Bool) -> String {
        anonymous ? "/public/\(index)" : "/private/\(index)"
    }

    init(using generator: inout SeededGenerator) {
        rates = SessionServer.Rates(
            serverError: Double.random(in: 0...0.15, using: &generator),
            refreshFailure: Double.random(in: 0...0.3, using: &generator),
            latencyMilliseconds: 0...Int.random(in: 0...300, using: &generator)
        )
        maxConcurrent = Bool.random(using: &generator) ? nil : Int.random(in: 1...4, using: &generator)
        maxAttempts = Int.random(in: 2...5, using: &generator)
        startsSignedIn = Int.random(in: 0..<4, using: &generator) != 0
        let priorities: [RequestPriority] = [.low, .default, .high]
        steps = (0..<Int.random(in: 8...30, using: &generator)).map { _ in
            let at = Duration.milliseconds(Int.random(in: 0...2500, using: &generator))
            let action: Action =
                switch Int.random(in: 0..<20, using: &generator) {
                case 0..<2: .signIn
                case 2: .signOut
                case 3..<5: .expire
                default:
                    .send(
                        anonymous: Int.random(in: 0..<4, using: &generator) == 0,
                        priority: priorities.randomElement(using: &generator)!)
                }
            return Step(at: at, action: action)
        }
    }
}

/// The checks both session property tests make of a finished run's outcomes and journal.
enum SessionChecks {
    static func check(
        ledger: OutcomeLedger<Int>, requests: [(index: Int, anonymous: Bool)], events: [GateEvent],
        startVersion: Int, credentialVersion: Int, refreshesIssued: Int, context: String,
        allowedFailures: Set<GateError.Code> = [.signedOut, .refreshFailed, .retriesExhausted],
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        for violation in ledger.violations { Issue.record("\(context): \(violation)", sourceLocation: sourceLocation) }
        let allowed = Set(allowedFailures.map { "\($0)" }).union(["status 200"])
        for (index, anonymous) in requests {
            let outcome = ledger.outcome(of: index) ?? "none"
            if anonymous {
                #expect(
                    outcome == "status 200", "\(context): anonymous request \(index) ended with \(outcome)",
                    sourceLocation: sourceLocation)
            } else {
                #expect(
                    allowed.contains(outcome), "\(context): request \(index) ended with \(outcome)",
                    sourceLocation: sourceLocation)
            }
        }
        RefreshInvariant.check(
            events, startVersion: startVersion, credentialVersion: credentialVersion, tokensIssued: refreshesIssued,
            context: context, sourceLocation: sourceLocation)
        // Anonymous requests never park, never start a refresh, never go out with a credential.
        var anonymousIDs: Set<UInt64> = []
        for case .initial(let id, let name, _) in events where name.contains("/public/") { anonymousIDs.insert(id) }
        for event in events {
            switch event {
            case .redirect(let id, _) where anonymousIDs.contains(id),
                .parked(let id, _) where anonymousIDs.contains(id),
                .refreshStarted(_, let id?) where anonymousIDs.contains(id),
                .failure(let id, _) where anonymousIDs.contains(id):
                Issue.record("\(context): anonymous request #\(id): \(event)", sourceLocation: sourceLocation)
            case .running(let id, _, let version) where anonymousIDs.contains(id) && version != 0:
                Issue.record("\(context): anonymous request #\(id) carried v\(version)", sourceLocation: sourceLocation)
            default:
                break
            }
        }
        // Every opened flight has exactly one end.
        let ends = events.count {
            switch $0 {
            case .success, .failure, .useCache: true
            default: false
            }
        }
        let flights = events.count { if case .initial = $0 { true } else { false } }
        #expect(ends == flights, "\(context): \(flights) flights, \(ends) ends", sourceLocation: sourceLocation)
    }
}
