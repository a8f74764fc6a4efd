import Conductor
import ConductorTestKit
import HTTPTypes
import Synchronization
import Testing

/// Completion, failure, cancellation, refresh and shutdown racing each other, many times over.
/// `CONDUCTOR_STRESS=<n>` raises the count; every failure names its seed, which
/// `CONDUCTOR_REPLAY=<seed>` replays.
@Suite(.timeLimit(.minutes(2)))
struct GateStressTests {
    struct Boom: Error {}

    @Test func schedulerEndsEveryCallerOnceWhileCompletionFailureCancelAndShutdownRace() async throws {
        for seed in StressConfiguration.seeds(default: 30, base: 0x5C4E_D01E) {
            var generator = SeededGenerator(seed: seed)
            let limit = Int.random(in: 1...3, using: &generator)
            let scheduler = try PriorityScheduler(maxConcurrent: limit, agingThreshold: 3)
            let ledger = OutcomeLedger<Int>()
            struct Counters {
                var running = 0
                var peak = 0
                var uniqueRunning = false
                var overlaps = 0
            }
            let counters = Locked(Counters())
            let count = 40
            let shutdownAt = Bool.random(using: &generator) ? Int.random(in: 0..<count, using: &generator) : nil
            var callers: [Task<Void, Never>] = []
            for index in 0..<count {
                ledger.expect(index)
                let priority = RequestPriority.allCases.randomElement(using: &generator)!
                let fails = Int.random(in: 0..<4, using: &generator) == 0
                let key: Int? = Int.random(in: 0..<6, using: &generator) == 0 ? index % 2 : nil
                let work: @Sendable () async throws -> Int = {
                    counters.withLock { counters in
                        if counters.uniqueRunning || (priority == .unique && counters.running > 0) {
                            counters.overlaps += 1
                        }
                        counters.running += 1
                        counters.peak = max(counters.peak, priority == .unique ? 0 : counters.running)
                        if priority == .unique { counters.uniqueRunning = true }
                    }
                    await Task.yield()
                    counters.withLock { counters in
                        counters.running -= 1
                        if priority == .unique { counters.uniqueRunning = false }
                    }
                    if fails { throw Boom() }
                    return index
                }
                callers.append(
                    Task {
                        do {
                            if let key {
                                _ = try await scheduler.run(priority: priority, coalescingKey: key, work)
                            } else {
                                _ = try await scheduler.run(priority: priority, work)
                            }
                            ledger.record(index, "done")
                        } catch is CancellationError {
                            ledger.record(index, "cancelled")
                        } catch let error as SchedulerError {
                            ledger.record(index, "\(error.code)")
                        } catch {
                            ledger.record(index, "failed")
                        }
                    })
                if Int.random(in: 0..<4, using: &generator) == 0 {
                    callers[Int.random(in: 0...index, using: &generator)].cancel()
                }
                if index == shutdownAt { scheduler.shutdown() }
                if index % 5 == 0 { await Task.yield() }
            }
            let idleWaiter = Task { try await scheduler.whenIdle() }
            if Bool.random(using: &generator) { idleWaiter.cancel() }
            guard await awaitAll(callers) else {
                Issue.record("seed \(seed): a caller never ended")
                return
            }
            _ = await idleWaiter.result
            for violation in ledger.violations { Issue.record("seed \(seed): \(violation)") }
            let final = counters.withLock { $0 }
            #expect(final.overlaps == 0, "seed \(seed): unique overlapped other work")
            #expect(final.peak <= limit, "seed \(seed): \(final.peak) ran at once with a limit of \(limit)")
            if shutdownAt != nil {
                let error = await #expect(throws: SchedulerError.self, "seed \(seed)") { try await scheduler.run { 0 } }
                #expect(error?.code == .shutDown, "seed \(seed)")
            }
            try await scheduler.whenIdle()
        }
    }

    @Test func gateEndsEveryRequestOnceWhileRefreshCancelAndShutdownRace() async throws {
        for seed in StressConfiguration.seeds(default: 30, base: 0x6A7E_57E5) {
            var generator = SeededGenerator(seed: seed)
            let authority = MemoryAuthority(transport: MemoryTransport(validToken: nil))
            var configuration = GateConfiguration(jitterSeed: seed, eventRetention: 100_000)
            configuration.maxConcurrentRequests =
                Bool.random(using: &generator) ? nil : Int.random(in: 1...4, using: &generator)
            configuration.retry.schedule = .attempts(3, backoff: .milliseconds(200))
            let gate = try RequestGateTests.makeGate(authority, credential: "stale", configuration: configuration)
            let ledger = OutcomeLedger<Int>()
            let count = 30
            let shutdownAt = Bool.random(using: &generator) ? Int.random(in: 0..<count, using: &generator) : nil
            var callers: [Task<Void, Never>] = []
            for index in 0..<count {
                ledger.expect(index)
                let priority = RequestPriority.allCases.randomElement(using: &generator)!
                let key: String? = Int.random(in: 0..<5, using: &generator) == 0 ? "shared" : nil
                callers.append(
                    Task {
                        do {
                            let reply = try await gate.send(
                                RequestGateTests.get("/\(index)"), priority: priority, coalescingKey: key)
                            ledger.record(index, "status \(reply.response.status.code)")
                        } catch {
                            ledger.record(index, (error as? GateError).map { "\($0.code)" } ?? "\(error)")
                        }
                    })
                switch Int.random(in: 0..<10, using: &generator) {
                case 0: authority.expire()
                case 1: authority.setFailing(true)
                case 2: authority.setFailing(false)
                case 3: callers[Int.random(in: 0...index, using: &generator)].cancel()
                default: break
                }
                if index == shutdownAt { gate.shutdown() }
                if index % 4 == 0 { await Task.yield() }
            }
            guard await awaitAll(callers) else {
                Issue.record(
                    "seed \(seed): a caller never ended; the gate's last events: \(gate.recordedEvents.suffix(20))")
                return
            }
            for violation in ledger.violations { Issue.record("seed \(seed): \(violation)") }
            // A storm of expiries and failing refreshes may pass the default refresh window
            // (5 in 30 s) in some interleavings: how many refreshes a seed's requests start
            // depends on how they overlap, which a busy machine changes.
            let allowed = [
                "status 200", "refreshFailed", "cancelled", "shutDown", "retriesExhausted", "refreshWindowExceeded",
            ]
            for index in 0..<count {
                let outcome = ledger.outcome(of: index) ?? "none"
                #expect(allowed.contains(outcome), "seed \(seed): request \(index) ended with \(outcome)")
            }
            if shutdownAt == nil {
                RefreshInvariant.check(
                    gate.recordedEvents, startVersion: 1, credentialVersion: gate.credentialVersion,
                    tokensIssued: authority.issued, context: "seed \(seed)")
            } else {
                RefreshInvariant.checkWithoutJournal(
                    startVersion: 1, credentialVersion: gate.credentialVersion, tokensIssued: authority.issued,
                    context: "seed \(seed)")
            }
            if shutdownAt != nil {
                let error = await #expect(throws: GateError.self, "seed \(seed)") {
                    try await gate.send(RequestGateTests.get("/late"))
                }
                #expect(error?.code == .shutDown, "seed \(seed)")
            }
            gate.shutdown()
        }
    }
}
