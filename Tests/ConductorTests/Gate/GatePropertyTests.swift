import Conductor
import ConductorTestKit
import HTTPTypes
import Testing

/// The gate's invariants under random arrivals, 401s, 429s with `Retry-After`, 500s, dropped
/// connections, cancellations, timeouts and refresh failures, on a `ManualClock`. Every failure
/// names its seed; `CONDUCTOR_REPLAY=<seed> swift test --filter GatePropertyTests` replays it.
// Serialized: at stress sizes, hundreds of cases at once would share two threads and
// each case's time limit would measure the crowd, not the case.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct GatePropertyTests {
    static let seeds = StressConfiguration.seeds(default: 40, base: 0x6A7E_0001)

    /// When the property test's judge calls token `tN` stale: N × 800 ms + 300 ms.
    static func expiry(of token: String) -> Duration {
        .milliseconds(300 + 800 * (Int(String(token.dropFirst())) ?? 0))
    }

    @Test(arguments: seeds)
    func invariantsHoldUnderRandomFaults(seed: UInt64) async throws {
        var generator = SeededGenerator(seed: seed)
        let scenario = Scenario(using: &generator)
        let clock = ManualClock()
        let transport = ChaosTransport(seed: seed, rates: scenario.rates, clock: clock)
        var configuration = GateConfiguration(
            maxConcurrentRequests: scenario.maxConcurrent,
            retry: .automatic(
                .attempts(scenario.maxAttempts, backoff: .milliseconds(100), maxBackoff: .seconds(2)),
                retryAfter: .honoured(upTo: .seconds(60))),
            // Longer than any scripted refresh latency, so a refresh fails only when scripted
            // to; the refresh deadline has its own deterministic test.
            refreshTimeout: .seconds(3600),
            jitterSeed: seed,
            eventRetention: 1_000_000
        )
        configuration.agingThreshold = 4
        // Every other seed keeps the default refresh window; the rest refresh without bound, so
        // the invariants are checked on every refresh a rejection asks for.
        let windowed = seed % 2 == 0
        if !windowed { configuration.refreshWindow = nil }
        // One seed in three judges the credential before each send: token `tN` is stale from
        // N × 800 ms + 300 ms on (`t0` from 300 ms), so refreshes start before sending too,
        // racing the ones rejections start. Another one in three also asks for refreshes with
        // no request, from callers of their own.
        let judges = seed % 3 == 1
        let asksForRefreshes = seed % 3 == 2
        var judge: (@Sendable (String, ManualClock.Instant) -> Bool)?
        if judges {
            judge = { token, now in now.offset >= GatePropertyTests.expiry(of: token) }
        }
        let gate = try RequestGate<String>(
            transport: transport,
            credential: scenario.startsWithCredential ? "t0" : nil,
            configuration: configuration,
            clock: clock,
            authorize: { request, token in request.headerFields[.authorization] = "Bearer \(token)" },
            requiresRefresh: judge,
            refresh: { _ in try await transport.refresh() }
        )
        let ledger = OutcomeLedger<Int>()
        var callers: [Task<Void, Never>] = []
        for (index, request) in scenario.requests.enumerated() {
            ledger.expect(index)
            let caller = Task {
                do {
                    try await clock.sleep(until: .init(offset: request.arrival))
                } catch {
                    ledger.record(index, "cancelled before sending")
                    return
                }
                var http = HTTPRequest(method: .get, scheme: "https", authority: "chaos.test", path: "/\(request.tag)")
                http.headerFields[ChaosTransport.tag] = request.tag
                do {
                    let reply = try await gate.send(
                        http, priority: request.priority, coalescingKey: request.coalescingKey,
                        timeout: request.timeout)
                    ledger.record(index, "status \(reply.response.status.code)")
                } catch let error {
                    ledger.record(index, (error as? GateError).map { "\($0.code)" } ?? "\(error)")
                }
            }
            callers.append(caller)
            if asksForRefreshes && index % 4 == 0 {
                callers.append(
                    Task {
                        guard (try? await clock.sleep(until: .init(offset: request.arrival))) != nil else { return }
                        _ = try? await gate.refresh()
                    })
            }
            if let cancelAt = request.cancelAt {
                callers.append(
                    Task {
                        guard (try? await clock.sleep(until: .init(offset: cancelAt))) != nil else { return }
                        caller.cancel()
                    })
            }
        }
        let reachedTheEnd = try await RefreshInvariant.drive(
            callers, gate: gate, clock: clock, seed: seed)
        guard reachedTheEnd else {
            Issue.record("seed \(seed): the scenario had not settled after the driver's step budget")
            gate.shutdown()
            return
        }

        // Every caller returned (or the driver would still be waiting) and ended exactly once.
        for violation in ledger.violations { Issue.record("seed \(seed): \(violation)") }
        let allowed = Set<String>([
            "status 200", "cancelled before sending", "\(GateError.Code.refreshFailed)",
            "\(GateError.Code.retriesExhausted)", "\(GateError.Code.cancelled)", "\(GateError.Code.transport)",
            "\(GateError.Code.timedOut)",
        ]).union(windowed ? ["\(GateError.Code.refreshWindowExceeded)"] : [])
        for index in scenario.requests.indices {
            let outcome = ledger.outcome(of: index) ?? "none"
            #expect(allowed.contains(outcome), "seed \(seed): request \(index) ended with \(outcome)")
        }
        let events = gate.recordedEvents
        RefreshInvariant.check(
            events, startVersion: scenario.startsWithCredential ? 1 : 0, credentialVersion: gate.credentialVersion,
            tokensIssued: transport.issued, context: "seed \(seed)")
        let refreshesStarted = events.count { if case .refreshStarted = $0 { true } else { false } }
        #expect(transport.refreshCalls <= refreshesStarted, "seed \(seed)")
        // Nothing went out with a credential older than the newest one.
        let stale = transport.sends.filter { $0.token != $0.newest }
        #expect(stale.isEmpty, "seed \(seed): stale sends \(stale.prefix(3))")
        // Nothing loops: sends per request stay within the budget.
        let callersPerTag = Dictionary(grouping: scenario.requests, by: \.tag).mapValues(\.count)
        let sendsPerTag = Dictionary(grouping: transport.sends, by: \.tag).mapValues(\.count)
        for (tag, count) in sendsPerTag {
            #expect(
                count <= scenario.maxAttempts * (callersPerTag[tag] ?? 0),
                "seed \(seed): \(tag) was sent \(count) times with a budget of \(scenario.maxAttempts)")
        }
        let ends = events.filter {
            switch $0 {
            case .success, .failure, .useCache: true
            default: false
            }
        }
        let flights = events.filter { if case .initial = $0 { true } else { false } }
        #expect(ends.count == flights.count, "seed \(seed): \(flights.count) flights but \(ends.count) ends")
        gate.shutdown()
    }
}

/// One random run of the property test, drawn from its seed.
struct Scenario {
    struct Request {
        var tag: String
        var arrival: Duration
        var priority: RequestPriority
        var coalescingKey: String?
        var timeout: Duration?
        var cancelAt: Duration?
    }

    var rates: ChaosTransport.Rates
    var maxConcurrent: Int?
    var maxAttempts: Int
    var startsWithCredential: Bool
    var requests: [Request]

    init(using generator: inout SeededGenerator) {
        rates = ChaosTransport.Rates(
            unauthorized: Double.random(in: 0...0.25, using: &generator),
            tooManyRequests: Double.random(in: 0...0.15, using: &generator),
            serverError: Double.random(in: 0...0.15, using: &generator),
            drop: Double.random(in: 0...0.15, using: &generator),
            refreshFailure: Double.random(in: 0...0.35, using: &generator),
            latencyMilliseconds: 0...Int.random(in: 0...400, using: &generator),
            retryAfterSeconds: [0, 1, 3, 90]
        )
        maxConcurrent = Bool.random(using: &generator) ? nil : Int.random(in: 1...4, using: &generator)
        maxAttempts = Int.random(in: 1...5, using: &generator)
        startsWithCredential = Bool.random(using: &generator)
        let priorities: [RequestPriority] = [.low, .default, .high, .default, .low, .high, .unique]
        requests = (0..<Int.random(in: 5...30, using: &generator)).map { index in
            let key: String? =
                Int.random(in: 0..<5, using: &generator) == 0 ? ["a", "b"].randomElement(using: &generator) : nil
            let arrival = Duration.milliseconds(Int.random(in: 0...3000, using: &generator))
            let timeout: Duration? =
                Int.random(in: 0..<3, using: &generator) == 0
                ? .milliseconds(Int.random(in: 100...4000, using: &generator)) : nil
            let cancelAt: Duration? =
                Int.random(in: 0..<6, using: &generator) == 0
                ? arrival + .milliseconds(Int.random(in: 0...1500, using: &generator)) : nil
            return Request(
                tag: key.map { "shared-\($0)" } ?? "r\(index)",
                arrival: arrival,
                priority: priorities.randomElement(using: &generator)!,
                coalescingKey: key,
                timeout: timeout,
                cancelAt: cancelAt
            )
        }
    }
}
