import Conductor
import Dispatch
import Foundation

/// Runs a scenario's tasks one job at a time on one thread, in an order drawn from a seed,
/// with time that moves only when nothing can run — so an interleaving that broke a test can
/// be run again exactly.
///
/// Every task the scenario starts through Conductor (a run's driver and workers, a task
/// graph's bodies, timers, observers) runs on the simulation, and so does every child task
/// of the scenario. When no job is runnable, the simulation moves its ``clock`` to the
/// earliest sleeper's deadline, so timeouts and backoffs fire in simulated time:
///
/// ```swift
/// let run = try await Simulation.run(seed: 42) { simulation in
///     var graph = TaskGraph()
///     graph.add("config") { _ in try await loadConfig() }
///     graph.add("feed", dependsOn: ["config"], options: TaskOptions(timeout: .seconds(2))) { _ in try await loadFeed() }
///     return try await graph.run(clock: simulation.clock)
/// }
/// #expect(run.value.outcome == .completed)
/// ```
///
/// Work that leaves the simulation — a hop to the main actor or to an actor of your own, a
/// `Task.detached` of your code, a callback from another thread — runs at its own pace, and
/// its return to the simulation cannot be replayed. The simulation counts such returns in
/// ``SimulationRun/escapes``; a scenario whose count is not zero is not reproducible. The count
/// sees only work that comes back after its task suspended: a callback that resumes a task
/// before it has suspended lets it go on at once, unseen — and at a moment real time decides.
public final class Simulation: TaskExecutor, Sendable {
    /// The seed the order of jobs is drawn from.
    public let seed: UInt64
    /// The scenario's time: pass it wherever Conductor takes a clock.
    public let clock: ManualClock
    /// The faults ``injectFault(at:key:)`` draws from, by the seed.
    public let faultPlan: FaultPlan

    /// The executor's queue and counters. `enqueue` runs wherever a task is started or a
    /// continuation resumed; Conductor does neither under a lock of its own, and a user's own
    /// lock is none of `Lock`'s debug nesting check's business, so this is a `Lock` like
    /// every other, and nothing else is taken or called while it is held.
    private let state: Lock<State>
    /// Signalled whenever a job arrives, so an idle run loop can wait for one from outside.
    private let arrivals = DispatchSemaphore(value: 0)

    private struct State {
        var jobs: [UnownedJob] = []
        var random: SplitMix64
        /// The run loop's thread, once it runs: a job enqueued from any other thread while
        /// the loop is running came back from work that escaped the simulation.
        var loopThread: pthread_t?
        var escapes = 0
        var jobsRun = 0
        var scenarioEnded = false
        /// What ``Simulation/record(_:)`` and ``Simulation/traced(_:isolation:_:)`` wrote, in order.
        var trace: [String] = []
        /// How often each fault point (and key) has been visited: a draw depends on the seed,
        /// the point, the key and the visit, never on a shared stream, so a point's faults do
        /// not change when another point is asked about more or less often.
        var visits: [FaultSite: Int] = [:]
        var faults: [InjectedFault] = []
        /// The run loop has returned: jobs that arrive later (a stalled scenario's tasks,
        /// escaped work coming back) go to the global executor instead of a queue nobody
        /// runs, where each would keep its task, and the task the simulation, forever.
        var loopEnded = false
    }

    private init(seed: UInt64, clock: ManualClock, faultPlan: FaultPlan) {
        self.seed = seed
        self.clock = clock
        self.faultPlan = faultPlan
        self.state = Lock(State(random: SplitMix64(seed: seed)))
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        let current = pthread_self()
        let queued = state.withLock { state in
            guard !state.loopEnded else { return false }
            state.jobs.append(unowned)
            if let loop = state.loopThread, pthread_equal(loop, current) == 0 { state.escapes += 1 }
            return true
        }
        guard queued else {
            globalConcurrentExecutor.enqueue(ExecutorJob(unowned))
            return
        }
        arrivals.signal()
    }

    /// Adds `entry` to the run's trace (``SimulationRun/trace``, ``SimulationError/trace``).
    public func record(_ entry: String) {
        state.withLock { $0.trace.append(entry) }
    }

    struct FaultSite: Hashable {
        let point: String
        let key: String?
    }

    /// Counts a visit to `point` and draws its fault, recording one that is injected in the
    /// run's faults and its trace.
    func drawFault(at point: String, key: String?) -> InjectedFault? {
        state.withLock { state in
            let site = FaultSite(point: point, key: key)
            let visit = (state.visits[site] ?? 0) + 1
            state.visits[site] = visit
            let unit = FaultDraw.unit(seed: seed, point: point, key: key, visit: visit)
            guard let kind = faultPlan.fault(at: point, unit: unit) else { return nil }
            let fault = InjectedFault(point: point, key: key, visit: visit, kind: kind)
            state.faults.append(fault)
            state.trace.append("fault: \(fault)")
            return fault
        }
    }

    /// Runs `scenario` under `seed` and returns its result with what the run loop saw.
    ///
    /// - Parameters:
    ///   - seed: Picks the next job whenever more than one can run.
    ///   - clock: The scenario's time; a new one by default.
    ///   - faults: The faults ``injectFault(at:key:)`` injects, drawn from `seed`; none by default.
    ///   - idleLimit: How long (real time) the loop waits, with nothing runnable and nobody
    ///     sleeping on the clock, for escaped work to come back before it gives up on the
    ///     scenario: ``SimulationError/Code/stalled``.
    ///   - scenario: The work, given the simulation for its clock.
    public static func run<Value: Sendable>(
        seed: UInt64,
        clock: ManualClock = ManualClock(),
        faults: FaultPlan = .none,
        idleLimit: Duration = .seconds(5),
        _ scenario: @escaping @Sendable (Simulation) async throws -> Value
    ) async throws -> SimulationRun<Value> {
        let ending = try await execute(seed: seed, clock: clock, faults: faults, idleLimit: idleLimit, scenario)
        return SimulationRun(
            seed: seed, value: try ending.result.get(), jobsRun: ending.jobsRun, escapes: ending.escapes,
            trace: ending.trace, faults: ending.faults)
    }

    /// How a scenario ended under one seed: its result, and what the loop saw.
    struct Ending<Value: Sendable> {
        let result: Result<Value, any Error>
        let jobsRun: Int
        let escapes: Int
        let trace: [String]
        let faults: [InjectedFault]
    }

    /// Runs `scenario` under `seed`; throws only when it stalls.
    static func execute<Value: Sendable>(
        seed: UInt64,
        clock: ManualClock,
        faults: FaultPlan,
        idleLimit: Duration,
        _ scenario: @escaping @Sendable (Simulation) async throws -> Value
    ) async throws(SimulationError) -> Ending<Value> {
        let simulation = Simulation(seed: seed, clock: clock, faultPlan: faults)
        let result = Lock<Result<Value, any Error>?>(nil)
        let root = Task(executorPreference: simulation) {
            let outcome: Result<Value, any Error>
            do {
                outcome = .success(
                    try await TaskPlacement.$executor.withValue(simulation) { try await scenario(simulation) })
            } catch {
                outcome = .failure(error)
            }
            result.withLock { $0 = outcome }
            simulation.state.withLock { $0.scenarioEnded = true }
        }
        let stalled = await simulation.runLoop(idleLimit: idleLimit)
        let (escapes, jobsRun, trace, injected) = simulation.state.withLock {
            ($0.escapes, $0.jobsRun, $0.trace, $0.faults)
        }
        if stalled {
            root.cancel()
            throw SimulationError.stalled(seed: seed, jobsRun: jobsRun, idleLimit: idleLimit)
        }
        guard let outcome = result.withLock({ $0 }) else {
            throw SimulationError.stalled(seed: seed, jobsRun: jobsRun, idleLimit: idleLimit)
        }
        return Ending(result: outcome, jobsRun: jobsRun, escapes: escapes, trace: trace, faults: injected)
    }

    /// Runs the loop on a thread of its own until the scenario has ended; returns whether it
    /// stalled instead.
    private func runLoop(idleLimit: Duration) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let thread = Thread { [self] in
                continuation.resume(returning: loop(idleLimit: idleLimit))
            }
            thread.stackSize = 8 << 20
            thread.start()
        }
    }

    private enum Next {
        case run(UnownedJob)
        case ended
        case idle
    }

    private func loop(idleLimit: Duration) -> Bool {
        let current = pthread_self()
        state.withLock { $0.loopThread = current }
        defer {
            let left = state.withLock { state in
                state.loopEnded = true
                defer { state.jobs = [] }
                return state.jobs
            }
            for job in left { globalConcurrentExecutor.enqueue(ExecutorJob(job)) }
        }
        while true {
            let next = state.withLock { state -> Next in
                if !state.jobs.isEmpty {
                    let index = Int(state.random.next() % UInt64(state.jobs.count))
                    state.jobsRun += 1
                    return .run(state.jobs.remove(at: index))
                }
                if state.scenarioEnded { return .ended }
                return .idle
            }
            switch next {
            case .run(let job):
                job.runSynchronously(on: asUnownedTaskExecutor())
            case .ended:
                return false
            case .idle:
                if let deadline = clock.earliestDeadline {
                    clock.advance(to: deadline)
                } else if arrivals.wait(timeout: .now() + .milliseconds(idleLimit.millisecondsClamped)) == .timedOut {
                    return true
                }
            }
        }
    }
}

/// What ``Simulation/run(seed:clock:faults:idleLimit:_:)`` returns: the scenario's value and how it ran.
public struct SimulationRun<Value: Sendable>: Sendable {
    /// The seed the run used: ``Simulation/run(seed:clock:faults:idleLimit:_:)`` with it runs the
    /// same interleaving again.
    public let seed: UInt64
    /// What the scenario returned.
    public let value: Value
    /// How many jobs the simulation ran.
    public let jobsRun: Int
    /// How many jobs came back to the simulation from work that had left it (a hop to
    /// another actor or thread). Zero for a reproducible run.
    public let escapes: Int
    /// What the scenario recorded with ``Simulation/record(_:)`` and
    /// ``Simulation/traced(_:isolation:_:)``, in the order it happened, with each injected
    /// fault as `fault: …`.
    public let trace: [String]
    /// The faults ``Simulation/injectFault(at:key:)`` injected, in the order it did.
    public let faults: [InjectedFault]
}

/// Why a simulation could not finish its scenario.
public struct SimulationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: Hashable, Sendable {
            case stalled
            case failed
        }
        private let value: Value

        /// Nothing could run, nobody slept on the clock, and no job came back within the
        /// idle limit: the scenario waits for something that never happens (a deadlock), or
        /// for work that left the simulation.
        public static let stalled = Code(value: .stalled)

        /// The scenario threw, or the check of ``Simulation/explore(seeds:faults:idleLimit:isolation:_:check:)``
        /// did, under this seed.
        public static let failed = Code(value: .failed)

        public var description: String {
            switch value {
            case .stalled: "stalled"
            case .failed: "failed"
            }
        }
    }

    public let code: Code
    /// The seed of the run that failed.
    public let seed: UInt64
    public let message: String
    /// The order in which the failed run's traced work started and ended (see
    /// ``Simulation/traced(_:isolation:_:)``); empty for a stalled run.
    public let trace: [String]

    public var description: String { message }

    init(code: Code, seed: UInt64, message: String, trace: [String] = []) {
        self.code = code
        self.seed = seed
        self.message = message
        self.trace = trace
    }

    static func failed(seed: UInt64, trace: [String], underlying: any Error) -> SimulationError {
        SimulationError(
            code: .failed, seed: seed,
            message:
                "simulation with seed \(seed) failed: \(underlying); replay it with Simulation.replay(seed: \(seed)); "
                + "order: \(trace.isEmpty ? "nothing traced" : trace.joined(separator: ", "))",
            trace: trace)
    }

    static func stalled(seed: UInt64, jobsRun: Int, idleLimit: Duration) -> SimulationError {
        SimulationError(
            code: .stalled, seed: seed,
            message:
                "simulation with seed \(seed) stalled after \(jobsRun) jobs: nothing could run, nothing slept "
                + "on its clock, and no work came back within \(idleLimit.shortDescription)")
    }
}

extension Duration {
    /// Whole milliseconds, clamped to `Int` (32 bits on watchOS).
    fileprivate var millisecondsClamped: Int {
        let (seconds, attoseconds) = components
        let milliseconds = seconds.multipliedReportingOverflow(by: 1_000)
        guard !milliseconds.overflow else { return seconds < 0 ? 0 : .max }
        return Int(clamping: max(0, milliseconds.partialValue + attoseconds / 1_000_000_000_000_000))
    }
}
