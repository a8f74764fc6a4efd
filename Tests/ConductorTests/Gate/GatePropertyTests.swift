import Conductor
import ConductorTestKit
import HTTPTypes
import Synchronization
import Testing

/// The gate's invariants under random arrivals, 401s, 429s with `Retry-After`, 500s, dropped
/// connections, cancellations, timeouts and refresh failures, on a `ManualClock`. Every failure
/// names its seed; `CONDUCTOR_SEED=<seed> swift test --filter GatePropertyTests` replays it.
@Suite(.timeLimit(.minutes(1)))
struct GatePropertyTests {
    static let seeds = StressConfiguration.seeds(StressConfiguration.iterations(default: 40), base: 0x6A7E_0001)

    @Test(arguments: seeds)
    func invariantsHoldUnderRandomFaults(seed: UInt64) async throws {
        var generator = SeededGenerator(seed: seed)
        let scenario = Scenario(using: &generator)
        let clock = ManualClock()
        let transport = ChaosTransport(seed: seed, rates: scenario.rates, clock: clock)
        var configuration = GateConfiguration(
            maxConcurrentRequests: scenario.maxConcurrent,
            maxAttempts: scenario.maxAttempts,
            initialBackoff: .milliseconds(100),
            maxBackoff: .seconds(2),
            maxRetryAfter: .seconds(60),
            // Longer than any scripted refresh latency, so a refresh fails only when scripted
            // to; the refresh deadline has its own deterministic test.
            refreshTimeout: .seconds(3600),
            jitterSeed: seed,
            eventRetention: 1_000_000
        )
        configuration.agingThreshold = 4
        let gate = RequestGate<String>(
            transport: transport,
            credential: scenario.startsWithCredential ? "t0" : nil,
            configuration: configuration,
            clock: clock,
            authorize: { request, token in request.headerFields[.authorization] = "Bearer \(token)" },
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
            if let cancelAt = request.cancelAt {
                callers.append(
                    Task {
                        guard (try? await clock.sleep(until: .init(offset: cancelAt))) != nil else { return }
                        caller.cancel()
                    })
            }
        }
        let settled = Atomic(false)
        let finishLine = Task {
            for caller in callers { await caller.value }
            await Self.settle(gate)
            settled.store(true, ordering: .sequentiallyConsistent)
            // Wakes the driver below, which then sees `settled`.
            try? await clock.sleep(until: .init(offset: .seconds(1_000_000_000)))
        }
        var stepper = SeededGenerator(seed: seed ^ 0xD21E)
        while !settled.load(ordering: .sequentiallyConsistent) {
            await clock.sleepers(atLeast: 1)
            if settled.load(ordering: .sequentiallyConsistent) { break }
            clock.advance(by: .milliseconds(Int.random(in: 10...150, using: &stepper)))
        }
        finishLine.cancel()
        await finishLine.value

        // Every caller returned (or the driver would still be waiting) and ended exactly once.
        for violation in ledger.violations { Issue.record("seed \(seed): \(violation)") }
        let allowed: Set<String> = [
            "status 200", "cancelled before sending", "\(GateError.Code.refreshFailed)",
            "\(GateError.Code.retriesExhausted)", "\(GateError.Code.cancelled)", "\(GateError.Code.transport)",
            "\(GateError.Code.timedOut)",
        ]
        for index in scenario.requests.indices {
            let outcome = ledger.outcome(of: index) ?? "none"
            #expect(allowed.contains(outcome), "seed \(seed): request \(index) ended with \(outcome)")
        }
        let events = gate.eventsSnapshot
        Self.checkRefreshes(
            events, gate: gate, transport: transport, startVersion: scenario.startsWithCredential ? 1 : 0, seed: seed)
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

    /// Waits until no refresh is open and the scheduler is idle.
    static func settle(_ gate: RequestGate<String>) async {
        while true {
            try? await gate.whenIdle()
            let snapshot = gate.eventsSnapshot
            if openRefreshes(snapshot) == 0 { return }
            var events = gate.events.makeAsyncIterator()
            for _ in 0...snapshot.count { _ = await events.next() }
        }
    }

    static func openRefreshes(_ events: [GateEvent]) -> Int {
        events.reduce(0) { open, event in
            switch event {
            case .refreshStarted: open + 1
            case .refreshSucceeded, .refreshFailed: open - 1
            default: open
            }
        }
    }

    /// At most one refresh per credential version at a time; every success is a new version.
    static func checkRefreshes(
        _ events: [GateEvent], gate: RequestGate<String>, transport: ChaosTransport, startVersion: Int, seed: UInt64
    ) {
        var open: [Int: Int] = [:]
        var started = 0
        var succeeded = 0
        for event in events {
            switch event {
            case .refreshStarted(let version):
                started += 1
                open[version, default: 0] += 1
                #expect(open[version]! == 1, "seed \(seed): two refreshes of v\(version) at once")
            case .refreshFailed(let version):
                open[version, default: 0] -= 1
            case .refreshSucceeded(let version):
                succeeded += 1
                open[version - 1, default: 0] -= 1
            default:
                break
            }
        }
        #expect(open.values.allSatisfy { $0 == 0 }, "seed \(seed): unfinished refreshes \(open)")
        #expect(succeeded == gate.credentialVersion - startVersion, "seed \(seed)")
        // A refresh abandoned at its deadline may still have had its token issued, late; the
        // gate discards that token. So every success used an issued token, not the reverse.
        #expect(transport.issued >= succeeded, "seed \(seed)")
        #expect(transport.refreshCalls <= started, "seed \(seed)")
    }
}

/// One random run of the property test, drawn from its seed.
struct Scenario {
    struct Request {
        var tag: String
        var arrival: Duration
        var priority: PriorityScheduler.Priority
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
        let priorities: [PriorityScheduler.Priority] = [.low, .default, .high, .default, .low, .high, .unique]
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
