import Conductor
import ConductorTestKit
import HTTPTypes
import Synchronization
import Testing

@testable import ConductorAssembly
@testable import ConductorCore
@testable import ConductorGate
@testable import ConductorGraph
@testable import ConductorHarmonizer
@testable import ConductorLaunch
@testable import ConductorReports

/// The gaps closed after the first version: per-request timeouts, a cancellable `whenIdle`,
/// priority escalation of coalesced work, misuse after shutdown, and regressions.
@Suite(.timeLimit(.minutes(1)))
struct GateHardeningTests {
    static func get(_ path: String) -> HTTPRequest {
        HTTPRequest(method: .get, scheme: "https", authority: "example.test", path: path)
    }

    // MARK: - Per-request timeout

    @Test func aRequestQueuedPastItsDeadlineEndsOnceWithTimedOut() async throws {
        let clock = ManualClock()
        let authority = MemoryAuthority(transport: MemoryTransport(validToken: "t0"))
        let held = Latch()
        let transport = HeldTransport(base: authority.transport, latch: held)
        let gate = try RequestGate<String>(
            transport: transport,
            credential: "t0",
            configuration: GateConfiguration(maxConcurrentRequests: 1, jitterSeed: 1, eventRetention: 1_000),
            clock: clock,
            authorize: { request, token in request.headerFields[.authorization] = "Bearer \(token)" },
            refresh: { _ in try authority.refresh() }
        )
        let ledger = OutcomeLedger<String>()
        ledger.expect("blocker")
        ledger.expect("queued")
        let blocker = Task {
            let reply = try? await gate.send(Self.get("/held"))
            ledger.record("blocker", reply.map { "\($0.response.status.code)" } ?? "failed")
        }
        await transport.arrivals(atLeast: 1)
        let queued = Task {
            do {
                _ = try await gate.send(Self.get("/queued"), timeout: .seconds(5))
                ledger.record("queued", "success")
            } catch {
                ledger.record("queued", (error as? GateError).map { "\($0.code)" } ?? "\(error)")
            }
        }
        await gate.queuedAttempts(atLeast: 1)
        await clock.sleepers(atLeast: 1, for: .requestTimeout)
        clock.advance(by: .seconds(5))
        await queued.value
        #expect(ledger.outcome(of: "queued") == "timedOut")
        held.open()
        await blocker.value
        ledger.verify()
        // The timed-out request never reached the transport.
        #expect(authority.transport.sends.map(\.path) == ["/held"])
        let failures = gate.recordedEvents.filter { if case .failure(_, .timedOut) = $0 { true } else { false } }
        #expect(failures.count == 1)
    }

    @Test func aRequestParkedBehindAHangingRefreshEndsWithTimedOutAtItsDeadline() async throws {
        let clock = ManualClock()
        let refreshRelease = Latch()
        let gate = try RequestGate<String>(
            transport: MemoryTransport(validToken: nil),
            credential: nil,
            configuration: GateConfiguration(refreshTimeout: .seconds(30), jitterSeed: 1),
            clock: clock,
            authorize: { request, token in request.headerFields[.authorization] = "Bearer \(token)" },
            refresh: { _ in
                await refreshRelease.wait()
                return "late"
            }
        )
        let request = Task { try await gate.send(Self.get("/feed"), timeout: .seconds(2)) }
        // The request's deadline and the refresh's deadline both wait on the clock, each on a
        // timer of its own.
        await clock.sleepers(atLeast: 1, for: .requestTimeout)
        await clock.sleepers(atLeast: 1, for: .refreshTimeout)
        clock.advance(by: .seconds(2))
        let error = await #expect(throws: GateError.self) { try await request.value }
        #expect(error?.code == .timedOut)
        #expect(error?.message == "GET /feed timed out after 2.00 s")
        refreshRelease.open()
    }

    /// The gate's deadlines are on the shared `DeadlineTimer`: however many requests wait
    /// with a timeout, one sleeper (tagged `.requestTimeout`) serves them all, and each
    /// request still ends at its own deadline.
    @Test func requestDeadlinesShareOneTimer() async throws {
        let clock = ManualClock()
        let held = Latch()
        let transport = HeldTransport(base: MemoryTransport(validToken: "t0"), latch: held)
        let gate = try RequestGate<String>(
            transport: transport,
            credential: "t0",
            configuration: GateConfiguration(jitterSeed: 1),
            clock: clock,
            authorize: { request, token in request.headerFields[.authorization] = "Bearer \(token)" },
            refresh: { _ in "t1" }
        )
        let early = Task { try await gate.send(Self.get("/early"), timeout: .seconds(1)) }
        let late = Task { try await gate.send(Self.get("/late"), timeout: .seconds(2)) }
        await transport.arrivals(atLeast: 2)
        await clock.sleepers(atLeast: 1, for: .requestTimeout)
        #expect(clock.sleeperCount(for: .requestTimeout) == 1)
        #expect(clock.sleeperCount == 1)
        clock.advance(by: .seconds(1))
        let first = await #expect(throws: GateError.self) { try await early.value }
        #expect(first?.code == .timedOut)
        // The timer goes back to sleep for the later deadline.
        await clock.sleepers(atLeast: 1, for: .requestTimeout)
        clock.advance(by: .seconds(1))
        let second = await #expect(throws: GateError.self) { try await late.value }
        #expect(second?.message == "GET /late timed out after 2.00 s")
        held.open()
    }

    /// A request's deadline is one entry on the gate's timer, holding the request until it
    /// fires or the flight ends (issue 36: no task, cell or lock of its own): a request that
    /// settles first leaves none behind, whether it succeeded or failed.
    @Test func aSettledRequestLeavesNoDeadlineBehind() async throws {
        let gate = try RequestGate<String>(
            transport: MemoryTransport(validToken: "t0"),
            credential: "t0",
            configuration: GateConfiguration(jitterSeed: 1),
            clock: ManualClock(),
            authorize: { request, token in request.headerFields[.authorization] = "Bearer \(token)" },
            refresh: { _ in "t1" }
        )
        let reply = try await gate.send(Self.get("/feed"), timeout: .seconds(5))
        #expect(reply.response.status == .ok)
        #expect(gate.pendingRequestDeadlines == 0)
        gate.signOut()
        let error = await #expect(throws: GateError.self) {
            try await gate.send(Self.get("/feed"), timeout: .seconds(5))
        }
        #expect(error?.code == .signedOut)
        #expect(gate.pendingRequestDeadlines == 0)
    }

    @Test func aTimedOutRequestFallsBackToTheCache() async throws {
        let clock = ManualClock()
        let authority = MemoryAuthority(transport: MemoryTransport(validToken: "t0"))
        let cache = MemoryCache()
        let held = Latch()
        let transport = HeldTransport(base: authority.transport, latch: held, holdingPaths: ["/feed"])
        let gate = try RequestGate<String>(
            transport: transport,
            credential: "t0",
            configuration: GateConfiguration(jitterSeed: 1),
            cache: cache,
            clock: clock,
            authorize: { request, token in request.headerFields[.authorization] = "Bearer \(token)" },
            refresh: { _ in try authority.refresh() }
        )
        await cache.store(GateResponse(response: HTTPResponse(status: .ok), body: [1]), for: Self.get("/feed"))
        let request = Task { try await gate.send(Self.get("/feed"), timeout: .seconds(1)) }
        await transport.arrivals(atLeast: 1)
        await clock.sleepers(atLeast: 1, for: .requestTimeout)
        clock.advance(by: .seconds(1))
        let reply = try await request.value
        #expect(reply.isFromCache && reply.body == [1])
        held.open()
    }

    @Test func theConfiguredTimeoutAppliesWhenSendNamesNone() async throws {
        let clock = ManualClock()
        let held = Latch()
        let transport = HeldTransport(base: MemoryTransport(validToken: "t0"), latch: held)
        let gate = try RequestGate<String>(
            transport: transport,
            credential: "t0",
            configuration: GateConfiguration(requestTimeout: .seconds(3), jitterSeed: 1),
            clock: clock,
            authorize: { request, token in request.headerFields[.authorization] = "Bearer \(token)" },
            refresh: { _ in "t1" }
        )
        let request = Task { try await gate.send(Self.get("/slow")) }
        await transport.arrivals(atLeast: 1)
        await clock.sleepers(atLeast: 1, for: .requestTimeout)
        clock.advance(by: .seconds(3))
        let error = await #expect(throws: GateError.self) { try await request.value }
        #expect(error?.code == .timedOut)
        held.open()
    }

    // MARK: - Scheduler: whenIdle, escalation, misuse

    @Test func whenIdleThrowsCancellationErrorAtOnceWhenItsTaskIsCancelled() async throws {
        let scheduler = try PriorityScheduler(maxConcurrent: 1)
        let latch = Latch()
        let started = Latch()
        let running = Task {
            try await scheduler.run {
                started.open()
                await latch.wait()
            }
        }
        await started.wait()
        let waiter = Task { try await scheduler.whenIdle() }
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        latch.open()
        try await running.value
        try await scheduler.whenIdle()
    }

    @Test func runAndSubmitOnAShutDownSchedulerThrowShutDown() async throws {
        let scheduler = try PriorityScheduler()
        scheduler.shutdown()
        let error = await #expect(throws: SchedulerError.self) { try await scheduler.run { 1 } }
        #expect(error?.code == .shutDown)
        let coalesced = await #expect(throws: SchedulerError.self) {
            try await scheduler.run(coalescingKey: "k") { 1 }
        }
        #expect(coalesced?.code == .shutDown)
        let submitted = #expect(throws: SchedulerError.self) { try scheduler.submit {} }
        #expect(submitted?.code == .shutDown)
        try await scheduler.whenIdle()
    }

    @Test func aHigherPriorityCallerRaisesAQueuedCoalescedFlight() async throws {
        let scheduler = try PriorityScheduler(maxConcurrent: 1)
        let latch = Latch()
        let order = Recorder<String>()
        let started = Latch()
        let blocker = Task {
            try await scheduler.run {
                started.open()
                await latch.wait()
            }
        }
        await started.wait()
        let ordinary = Task { try await scheduler.run(priority: .default) { order.append("default") } }
        await scheduler.queued(atLeast: 1)
        let lowFlight = Task {
            try await scheduler.run(priority: .low, coalescingKey: "avatar") {
                order.append("avatar")
                return 7
            }
        }
        await scheduler.queued(atLeast: 2)
        let urgent = Task { try await scheduler.run(priority: .high, coalescingKey: "avatar") { -1 } }
        // The joiner raised the flight to high before any slot freed up.
        await scheduler.waitUntilQueued(atLeast: 1, in: .high)
        latch.open()
        try await blocker.value
        #expect(try await lowFlight.value == 7)
        #expect(try await urgent.value == 7)
        try await ordinary.value
        #expect(order.all == ["avatar", "default"])
    }

    @Test func raisingAQueuedEntryMovesItOnceAndLeavesNoDuplicate() {
        var machine = SchedulerStateMachine<String>(limit: 1, agingThreshold: 100)
        #expect(machine.submit(id: 0, priority: .default, payload: "running") == .start)
        _ = machine.submit(id: 1, priority: .default, payload: "d1")
        _ = machine.submit(id: 2, priority: .low, payload: "flight")
        let raises = [
            machine.raise(id: 2, to: .high), machine.raise(id: 2, to: .default), machine.raise(id: 2, to: .unique),
            machine.raise(id: 9, to: .high),
        ]
        #expect(raises == [true, false, false, false])
        var order: [String] = []
        while !machine.isIdle { order += machine.finish(unique: false) }
        #expect(order == ["flight", "d1"])
    }

    // MARK: - Regressions

    /// Found reading `backOff`: a `Retry-After` beyond the cap ended the request
    /// without the status that asked for it.
    @Test func aRetryAfterBeyondTheCapReportsThe429Status() async throws {
        let authority = MemoryAuthority(transport: MemoryTransport(validToken: "t0"))
        authority.transport.state.withLock { $0.script = [.tooManyRequests] }
        var configuration = GateConfiguration(jitterSeed: 1)
        configuration.retry.retryAfter = .honoured(upTo: .seconds(2))
        let gate = try RequestGateTests.makeGate(authority, credential: "t0", configuration: configuration)
        let error = await #expect(throws: GateError.self) { try await gate.send(Self.get("/feed")) }
        #expect(error?.code == .retriesExhausted)
        #expect(error?.status == 429)
    }
}

/// Wraps a transport and holds requests (all, or those on `holdingPaths`) until the latch opens.
struct HeldTransport: GateTransport {
    let base: any GateTransport
    let latch: Latch
    var holdingPaths: Set<String>?
    private let arrived = ArrivalCounter()

    init(base: any GateTransport, latch: Latch, holdingPaths: Set<String>? = nil) {
        self.base = base
        self.latch = latch
        self.holdingPaths = holdingPaths
    }

    func send(_ request: HTTPRequest, body: GateRequestBody?) async throws -> GateTransportResponse {
        if holdingPaths.map({ $0.contains(request.path ?? "") }) ?? true {
            arrived.arrive()
            await latch.wait()
        }
        return try await base.send(request, body: body)
    }

    func arrivals(atLeast count: Int) async { await arrived.wait(atLeast: count) }
}

/// Counts arrivals and wakes whoever waits for a number of them.
final class ArrivalCounter: Sendable {
    private let state = Lock<(count: Int, waiters: [(Int, CheckedContinuation<Void, Never>)])>((0, []))

    func arrive() {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.count += 1
            let count = state.count
            let ready = state.waiters.filter { $0.0 <= count }.map(\.1)
            state.waiters.removeAll { $0.0 <= count }
            return ready
        }
        for waiter in ready { waiter.resume() }
    }

    func wait(atLeast count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if state.count >= count { return true }
                state.waiters.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }
}
