import Conductor
import Dispatch
import HTTPTypes
import Swinject
import Synchronization

// MARK: - harmonizer.countdown / harmonizer.registry

/// Counts down `n` times from two threads, half each. Setting up the count (DispatchGroup's
/// `n` calls to `enter()`, the harmonizer's initial count) is not timed; the count-downs and
/// the completion are.
func twoThreads(_ n: Int, _ countDown: @Sendable () -> Void) {
    DispatchQueue.concurrentPerform(iterations: 2) { _ in
        for _ in 0..<n / 2 { countDown() }
    }
}

/// Waits for a DispatchGroup's notify, as callers do.
func notified(_ group: DispatchGroup) async {
    await withCheckedContinuation { continuation in
        group.notify(queue: .global()) { continuation.resume() }
    }
}

/// A DispatchGroup entered `n` times (set up here), and the count-down of all of it.
func dispatchGroupCountDown(_ n: Int) -> @Sendable () async -> Void {
    let group = DispatchGroup()
    for _ in 0..<n { group.enter() }
    return {
        twoThreads(n) { group.leave() }
        await notified(group)
    }
}

/// A harmonizer counting `n` (set up here), and the count-down of all of it from two threads.
func harmonizerCountDown(_ n: Int) -> @Sendable () async -> Void {
    let harmonizer = try! Harmonizer(count: n)
    return {
        twoThreads(n) { harmonizer.leave() }
        _ = await harmonizer.outcome
    }
}

/// A registry whose harmonizer "load" counts `n` (set up here), and the count-down of all of it
/// by name.
func registryCountDown(_ n: Int) -> @Sendable () async -> Void {
    let registry = HarmonizerRegistry()
    let harmonizer = try! registry.create("load", count: n, on: .immediate) { _ in }
    return {
        twoThreads(n) { registry.leave("load") }
        _ = await harmonizer.outcome
    }
}

/// The same registry and count, counted down through one participant handle per thread, each
/// taken untimed (the lookup a participant pays once), as a module that keeps its handle would.
func registryHandleCountDown(_ n: Int) -> @Sendable () async -> Void {
    let registry = HarmonizerRegistry()
    let harmonizer = try! registry.create("load", count: n, on: .immediate) { _ in }
    let handles = [try! registry.participant(of: "load"), try! registry.participant(of: "load")]
    return {
        DispatchQueue.concurrentPerform(iterations: 2) { thread in
            let handle = handles[thread]
            for _ in 0..<n / 2 { handle.leave() }
        }
        _ = await harmonizer.outcome
    }
}

func dispatchGroupCountDownScenario(_ n: Int) async -> Double {
    let countDown = dispatchGroupCountDown(n)
    return await nanosecondsPerOperation(n) { await countDown() }
}

func harmonizerCountdownScenario(_ n: Int) -> Scenario {
    Scenario(
        name: "harmonizer.countdown", n: n, unit: "ns/countDown",
        subject: Contender(name: "Harmonizer.leave") {
            let countDown = harmonizerCountDown(n)
            return await nanosecondsPerOperation(n) { await countDown() }
        },
        baselines: [Contender(name: "DispatchGroup leave+notify") { await dispatchGroupCountDownScenario(n) }],
        note: "two threads count down n/2 each; the initial count (n enters) is set up untimed"
    )
}

func harmonizerRegistryScenario(_ n: Int) -> Scenario {
    Scenario(
        name: "harmonizer.registry", n: n, unit: "ns/countDown",
        subject: Contender(name: "registry.countDown(name)") {
            let countDown = registryCountDown(n)
            return await nanosecondsPerOperation(n) { await countDown() }
        },
        baselines: [Contender(name: "DispatchGroup leave+notify") { await dispatchGroupCountDownScenario(n) }]
    )
}

func harmonizerRegistryHandleScenario(_ n: Int) -> Scenario {
    Scenario(
        name: "harmonizer.registry handle", n: n, unit: "ns/countDown",
        subject: Contender(name: "participant.countDown()") {
            let countDown = registryHandleCountDown(n)
            return await nanosecondsPerOperation(n) { await countDown() }
        },
        baselines: [
            Contender(name: "registry.countDown(name)") {
                let countDown = registryCountDown(n)
                return await nanosecondsPerOperation(n) { await countDown() }
            },
            Contender(name: "DispatchGroup leave+notify") { await dispatchGroupCountDownScenario(n) },
        ],
        note: "a participant handle per thread, taken untimed; the by-name path for comparison"
    )
}

/// Counts completions and resumes a waiter at the expected number.
final class CompletionCounter: Sendable {
    private let state: Mutex<(count: Int, waiter: CheckedContinuation<Void, Never>?)> = Mutex((0, nil))
    private let expected: Int

    init(expected: Int) { self.expected = expected }

    func completed() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.count += 1
            guard state.count == expected else { return nil }
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            let done = state.withLock { state in
                if state.count == expected { return true }
                state.waiter = continuation
                return false
            }
            if done { continuation.resume() }
        }
    }
}

func harmonizerLifecycleScenario(_ cycles: Int) -> Scenario {
    let countDowns = 10
    return Scenario(
        name: "harmonizer.registry create→10→done", n: cycles, unit: "ns/cycle",
        subject: Contender(name: "registry.create+countDown") {
            let registry = HarmonizerRegistry()
            let counter = CompletionCounter(expected: cycles)
            return await nanosecondsPerOperation(cycles) {
                for _ in 0..<cycles {
                    try! registry.create("load", count: countDowns, on: .immediate) { _ in counter.completed() }
                    for _ in 0..<countDowns { registry.leave("load") }
                }
                await counter.wait()
            }
        },
        baselines: [
            Contender(name: "DispatchGroup enter/leave/notify") {
                let counter = CompletionCounter(expected: cycles)
                return await nanosecondsPerOperation(cycles) {
                    for _ in 0..<cycles {
                        let group = DispatchGroup()
                        for _ in 0..<countDowns { group.enter() }
                        group.notify(queue: .global()) { counter.completed() }
                        for _ in 0..<countDowns { group.leave() }
                    }
                    await counter.wait()
                }
            }
        ],
        note: "one thread; the harmonizer's completion runs .immediate, DispatchGroup's on the global queue"
    )
}

// MARK: - assembly.resolve

/// Swinject's `Container` is not Sendable. `@unchecked Sendable`: the contenders of a
/// scenario run one after another, so only one task ever uses the container at a time.
final class SwinjectBox: @unchecked Sendable {
    let container = Container()
}

final class AnalyticsService: Sendable {
    let id = 42
}

func assemblyScenario(_ n: Int) -> Scenario {
    let assembly = Assembly()
    assembly.register(AnalyticsService.self) { _ in AnalyticsService() }
    let box = SwinjectBox()
    box.container.register(AnalyticsService.self) { _ in AnalyticsService() }.inObjectScope(.container)
    let dictionary = Mutex<[ObjectIdentifier: any Sendable]>([
        ObjectIdentifier(AnalyticsService.self): AnalyticsService()
    ])
    return Scenario(
        name: "assembly.resolve", n: n, unit: "ns/resolve",
        subject: Contender(name: "Assembly.resolve") {
            _ = try! await assembly.resolve(AnalyticsService.self)
            var sum = 0
            let result = await nanosecondsPerOperation(n) {
                for _ in 0..<n { sum &+= try! await assembly.resolve(AnalyticsService.self).id }
            }
            precondition(sum == 42 * n)
            return result
        },
        baselines: [
            Contender(name: "Swinject resolve") {
                let container = box.container
                _ = container.resolve(AnalyticsService.self)
                var sum = 0
                let result = await nanosecondsPerOperation(n) {
                    for _ in 0..<n { sum &+= container.resolve(AnalyticsService.self)!.id }
                }
                precondition(sum == 42 * n)
                return result
            },
            Contender(name: "Mutex<[ObjectIdentifier: Any]>") {
                var sum = 0
                let result = await nanosecondsPerOperation(n) {
                    for _ in 0..<n {
                        let service = dictionary.withLock { $0[ObjectIdentifier(AnalyticsService.self)] }
                        sum &+= (service as! AnalyticsService).id
                    }
                }
                precondition(sum == 42 * n)
                return result
            },
        ],
        note: "an already-created singleton, one thread"
    )
}

// MARK: - gate

/// gate.schedule: no-op jobs through a PriorityScheduler limited to 8, priorities mixed.
func gateScheduleScenario(_ n: Int) -> Scenario {
    Scenario(
        name: "gate.schedule", n: n, unit: "ns/job",
        subject: Contender(name: "PriorityScheduler.submit") {
            await nanosecondsPerOperation(n) { await prioritySchedulerSubmit(jobs: n, limit: 8) }
        },
        baselines: [
            Contender(name: "TaskGroup limited to 8 by hand") {
                await nanosecondsPerOperation(n) { await handLimitedTaskGroup(jobs: n, limit: 8) }
            }
        ],
        note: "concurrency limit 8, low/default/high in turn"
    )
}

/// An in-memory server: answers 401 to any token but the valid one, 200 otherwise; counts
/// the requests that arrive with the starting token.
final class StormServer: GateTransport, Sendable {
    private let state: Mutex<(valid: String, refreshes: Int, sendsWithStartingToken: Int)>

    init(valid: String) { state = Mutex((valid, 0, 0)) }

    var refreshes: Int { state.withLock { $0.refreshes } }
    var sendsWithStartingToken: Int { state.withLock { $0.sendsWithStartingToken } }

    func send(_ request: HTTPRequest, body: GateRequestBody?) async throws -> GateTransportResponse {
        let token = request.headerFields[.authorization]
        let valid = state.withLock { state in
            if token == "t0" { state.sendsWithStartingToken += 1 }
            return state.valid
        }
        return GateTransportResponse(response: HTTPResponse(status: token == valid ? .ok : .unauthorized), body: [])
    }

    func issueToken() -> String {
        state.withLock { state in
            state.refreshes += 1
            state.valid = "t\(state.refreshes)"
            return state.valid
        }
    }
}

/// What a refresh storm did, read from the server and from the gate's journal.
struct StormCounts: CustomStringConvertible {
    var refreshes: Int
    /// Requests that reached the server with the starting token.
    var oldCredentialSends: Int
    /// Attempts the gate authorized with the starting credential (v1) after the transition
    /// that decided the refresh (`refreshStarted`): the issue's goal is 0.
    var oldCredentialSendsAfterDecision: Int
    /// Attempts re-sent after a 401 (the requests already on the wire with the old token).
    var resent: Int

    var description: String {
        "\(refreshes) refresh(es), \(oldCredentialSends) send(s) with the old credential "
            + "(\(oldCredentialSendsAfterDecision) after the refresh was decided), \(resent) re-sent"
    }
}

/// Sends `n` concurrent requests through a fresh gate whose starting token is `token` (from one
/// task group with `oldHarness`); returns the nanoseconds per request and what the storm did
/// (counted after the timing).
func refreshStorm(
    _ n: Int, startingWith token: String, server: StormServer, oldHarness: Bool = false
) async -> (Double, StormCounts) {
    let gate = stormGate(n, startingWith: token, server: server)
    let perRequest = await nanosecondsPerOperation(n) {
        if oldHarness {
            await stormBurstInTaskGroup(n, through: gate)
        } else {
            await stormBurst(n, through: gate)
        }
    }
    // Untimed: finish the journal, then read it through.
    gate.shutdown()
    var decided = false
    var counts = StormCounts(
        refreshes: server.refreshes, oldCredentialSends: server.sendsWithStartingToken,
        oldCredentialSendsAfterDecision: 0, resent: 0)
    for await event in gate.events {
        switch event {
        case .refreshStarted: decided = true
        case .running(_, let attempt, let version):
            if decided && version == 1 { counts.oldCredentialSendsAfterDecision += 1 }
            if attempt > 1 { counts.resent += 1 }
        default: break
        }
    }
    return (perRequest, counts)
}

/// A gate on `server` whose starting token is `token`. Every event of a burst of `n` is kept,
/// so the journal can be read afterwards; both contenders pay for the same retention. With
/// `holdingRefreshUntil`, a refresh returns only once that counter completes (the burst has
/// spawned every request) and the refresh's task has yielded twice, so the requests' flight
/// tasks, queued ahead of it, reach the gate first: every request of the burst waits for it.
func stormGate(
    _ n: Int, startingWith token: String, server: StormServer, refreshDelay: Duration? = nil,
    holdingRefreshUntil spawned: CompletionCounter? = nil
) -> RequestGate<String> {
    var configuration = GateConfiguration(eventRetention: 8 * n)
    // Bursts follow each other faster than the default window (5 refreshes in 30 s) allows:
    // every burst measures one refresh, never the window's refusal.
    configuration.refreshWindow = nil
    // A valid configuration: the initializer cannot throw for it.
    return try! RequestGate<String>(
        transport: server,
        credential: token,
        configuration: configuration,
        authorize: { request, token in request.headerFields[.authorization] = token },
        refresh: { _ in
            if let refreshDelay { try? await Task.sleep(for: refreshDelay) }
            if let spawned {
                await spawned.wait()
                await Task.yield()
                await Task.yield()
            }
            return server.issueToken()
        }
    )
}

/// `n` concurrent requests through `gate`, one unstructured task each, and the wait for the last
/// of them: the timed part of gate.refresh-storm.
///
/// Not a task group (issue 20): a group keeps its children in a list that the runtime walks to
/// unlink each child that finishes (`TaskGroup::removeChildTask`), and the storm's requests are
/// all alive at once and finish out of order, so the harness spent time quadratic in `n` —
/// 35 % of the expired burst's CPU at n = 10,000 — where the gate was to be measured.
/// `spawned`, if given, is completed once every request's task exists.
func stormBurst(
    _ n: Int, through gate: RequestGate<String>, timeout: Duration? = nil, spawned: CompletionCounter? = nil
) async {
    let request = HTTPRequest(method: .get, scheme: "http", authority: "bench", path: "/item")
    let finished = CompletionCounter(expected: n)
    for _ in 0..<n {
        Task {
            _ = try! await gate.send(request, timeout: timeout)
            finished.completed()
        }
    }
    spawned?.completed()
    await finished.wait()
}

/// gate.refresh-storm's burst before issue 20, in one task group (see `stormBurst`), kept for
/// one release as `gate.refresh-storm (old harness)`.
func stormBurstInTaskGroup(_ n: Int, through gate: RequestGate<String>) async {
    let request = HTTPRequest(method: .get, scheme: "http", authority: "bench", path: "/item")
    await withTaskGroup(of: Void.self) { group in
        for _ in 0..<n { group.addTask { _ = try! await gate.send(request) } }
    }
}

private let stormCountsPrinted = Atomic(false)

/// gate.refresh-storm: every request of a burst meets an expired token. Checked every round:
/// exactly one refresh, and no attempt authorized with the old credential once the refresh
/// was decided (only requests already on the wire are re-sent). With `oldHarness`, the burst
/// is sent from one task group, as before issue 20 (`gate.refresh-storm (old harness)`).
func gateRefreshStormScenario(_ n: Int, oldHarness: Bool = false) -> Scenario {
    Scenario(
        name: oldHarness ? "gate.refresh-storm (old harness)" : "gate.refresh-storm", n: n, unit: "ns/request",
        subject: Contender(name: "RequestGate, token expired") {
            let (time, counts) = await refreshStorm(
                n, startingWith: "t0", server: StormServer(valid: "t1"), oldHarness: oldHarness)
            precondition(counts.refreshes == 1, "a refresh storm made \(counts.refreshes) refreshes")
            precondition(
                counts.oldCredentialSendsAfterDecision == 0,
                "\(counts.oldCredentialSendsAfterDecision) send(s) with the old credential after the refresh was decided"
            )
            precondition(
                counts.resent == counts.oldCredentialSends, "re-sent \(counts.resent) of \(counts.oldCredentialSends)")
            if !stormCountsPrinted.exchange(true, ordering: .relaxed) {
                print("gate.refresh-storm (n = \(n), first round): \(counts)")
            }
            return time
        },
        baselines: [
            Contender(name: "RequestGate, token valid") {
                let (time, counts) = await refreshStorm(
                    n, startingWith: "t0", server: StormServer(valid: "t0"), oldHarness: oldHarness)
                precondition(counts.refreshes == 0 && counts.resent == 0, "the no-expiry run: \(counts)")
                return time
            }
        ],
        note: "in-memory transport; every round checks exactly 1 refresh and 0 attempts authorized with the old "
            + "credential after the refresh was decided (only requests already on the wire are re-sent); "
            + (oldHarness
                ? "the burst is one task group's children, as before issue 20 (kept for one release)"
                : "the burst is one unstructured task per request")
    )
}

/// gate.schedule's subject: `jobs` no-op jobs submitted to a scheduler limited to `limit`,
/// low/default/high in turn, then waiting until it is idle.
func prioritySchedulerSubmit(jobs: Int, limit: Int) async {
    let priorities: [RequestPriority] = [.low, .default, .high]
    let scheduler = try! PriorityScheduler(maxConcurrent: limit)
    for job in 0..<jobs { try! scheduler.submit(priority: priorities[job % 3]) {} }
    try! await scheduler.whenIdle()
}

/// The gate.schedule baseline: a TaskGroup kept to `limit` children in flight by hand.
func handLimitedTaskGroup(jobs: Int, limit: Int) async {
    await withTaskGroup(of: Void.self) { group in
        for job in 0..<jobs {
            if job >= limit { await group.next() }
            group.addTask(priority: [.low, .medium, .high][job % 3]) {}
        }
    }
}
