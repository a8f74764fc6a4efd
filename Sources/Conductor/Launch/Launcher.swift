public import Logging

/// Runs an app's start-up tasks: in the order added, or in parallel where tasks declare
/// dependencies; with readiness sets the first screen can await, a failure policy per task,
/// and a report of where the launch time went.
///
/// ```swift
/// let launcher = Launcher()
/// try launcher.add(PickNetworkChannel())
/// try launcher.add(LoadServerConfig())
/// try launcher.add(CheckForNewVersion())               // optional: its failure is reported
/// try launcher.addReadiness("firstScreen", after: ["channel", "config"])
/// launcher.observe(on: .mainActor, splash)              // the seed's delegate
/// try launcher.start()
///
/// switch await launcher.ready("firstScreen", timeout: .seconds(2)) {
/// case .ready: showHome()
/// case .timedOut, .failed: showOfflineHome()
/// }
/// print(TimelineRenderer().render(await launcher.report()))
/// ```
///
/// Tasks run on the ``TaskGraph`` engine, one launch per launcher. Any thread may add and
/// remove tasks before and during the launch: a removed pending task never starts, and a
/// removed running one is cancelled and abandoned at once. A required task's failure ends the
/// launch with a ``LaunchError`` naming it; an optional one's is reported and the launch goes on.
///
/// A launcher is itself a ``StartupTask``: add it to another launcher and its whole launch
/// runs as one task of the outer one.
///
/// - Complexity: adding or removing a task is O(1) amortised plus one short lock (O(n) to
///   remove before the launch); each task costs the graph's one lock per transition.
public final class Launcher: StartupTask, Sendable {
    public let name: String
    public let dependencies: [String]?
    public let isRequired: Bool

    private enum Phase {
        case idle
        case launching(GraphRunStorage)
    }

    private struct State {
        var plan = LaunchPlan()
        var phase = Phase.idle
    }

    private let state = Lock(State())
    private let journal = EventJournal<GraphEvent>(retention: .everything)
    /// Resolved when the launch starts: what `ready` and `report` wait for.
    private let launched = OnceCell<GraphRunStorage>()
    /// Measures readiness deadlines.
    private let clock: ClockSource
    /// Makes the launch's own clock source when it starts, so its times count from then.
    private let makeLaunchClock: @Sendable () -> ClockSource

    /// A launcher with no tasks.
    ///
    /// - Parameters:
    ///   - name: Its name as a task of an outer launcher.
    ///   - dependencies: As a task of an outer launcher; see ``StartupTask/dependencies``.
    ///   - isRequired: As a task of an outer launcher; see ``StartupTask/isRequired``.
    ///   - clock: Measures readiness deadlines, retry backoff and the report's times.
    ///   - logger: Receives a structured log line per event; nothing is logged without one.
    public init(
        _ name: String = "launch",
        dependsOn dependencies: [String]? = nil,
        isRequired: Bool = true,
        clock: some Clock<Duration> = ContinuousClock(),
        logger: Logger? = nil
    ) {
        self.name = name
        self.dependencies = dependencies
        self.isRequired = isRequired
        self.clock = ClockSource(clock)
        self.makeLaunchClock = { ClockSource(clock) }
        if let logger {
            let sink = GraphEventLogger(logger)
            journal.deliver(from: 0, on: .immediate) { batch in
                for event in batch { sink.log(event) }
            }
        }
    }

    // MARK: - Adding and removing

    /// Adds a task, before or during the launch. Its name must be new and its dependencies
    /// added first. Throws ``LaunchError/Code/launchFinished`` once the launch has ended.
    public func add(_ task: some StartupTask) throws(LaunchError) {
        try add(.task(task))
    }

    /// Adds a readiness set: ready once every named task has ended, whatever its outcome,
    /// while the launch goes on. Await it with ``ready(_:timeout:)``; tasks may depend on it.
    public func addReadiness(_ name: String, after tasks: [String]) throws(LaunchError) {
        try add(.readiness(name, after: tasks))
    }

    private func add(_ entry: LaunchPlan.Entry) throws(LaunchError) {
        // Chained tasks must reach the graph in the order they were chained, so the addition
        // happens under this lock; the graph leaves its wakeups to be done after it.
        let pending = try state.withLock { (state) throws(LaunchError) -> GraphRunStorage.PendingWakeups? in
            try state.plan.admit(entry)
            switch state.phase {
            case .idle:
                state.plan.keep(entry)
                return nil
            case .launching(let storage):
                var definitions: [NodeDefinition] = []
                state.plan.compile(entry, into: &definitions)
                do throws(GraphError) {
                    return try storage.addLeavingWakeups(definitions)
                } catch {
                    throw LaunchError.from(error)
                }
            }
        }
        pending?.perform()
    }

    /// Removes a task that has not ended: a pending one never starts, a running one is
    /// cancelled and abandoned at once; tasks that need it are skipped. Returns `false` if
    /// there is no such task or it had already ended. Before the launch its name is freed.
    @discardableResult
    public func remove(_ name: String) -> Bool {
        let storage = state.withLock { state -> GraphRunStorage? in
            switch state.phase {
            case .idle:
                _ = state.plan.forget(name)
                return nil
            case .launching(let storage):
                return state.plan.isTask(name) ? storage : nil
            }
        }
        guard let storage else { return false }
        return (try? storage.remove(name)) ?? false
    }

    /// Removes every task that has not ended (the seed's `removeAllStartupTask`); see
    /// ``remove(_:)``. Tasks added afterwards run as usual.
    public func removeAll() {
        let (storage, names) = state.withLock { state -> (GraphRunStorage?, [String]) in
            switch state.phase {
            case .idle:
                state.plan.forgetAllTasks()
                return (nil, [])
            case .launching(let storage):
                return (storage, state.plan.compiledTasks)
            }
        }
        guard let storage else { return }
        for name in names { _ = try? storage.remove(name) }
    }

    // MARK: - Launching

    /// Starts the launch in a task of its own and returns at once; later calls do nothing.
    /// Throws if a readiness set or dependency names a task removed before the launch.
    public func start() throws(LaunchError) {
        let started = try state.withLock {
            (state) throws(LaunchError) -> (GraphRunStorage, GraphRunStorage.PendingWakeups)? in
            guard case .idle = state.phase else { return nil }
            let storage = GraphRunStorage(concurrencyLimit: nil, clock: makeLaunchClock(), journal: journal)
            // Compiled on a copy, so a launch that fails validation leaves the plan as it was.
            var plan = state.plan
            let pending: GraphRunStorage.PendingWakeups
            do throws(GraphError) {
                pending = try storage.addLeavingWakeups(plan.compileEntries())
            } catch {
                throw LaunchError.from(error)
            }
            state.plan = plan
            state.phase = .launching(storage)
            return (storage, pending)
        }
        guard let (storage, pending) = started else { return }
        pending.perform()
        launched.resolve(storage)
        Task { await storage.drive() }
    }

    /// Cancels the launch: pending tasks never start and running ones are cancelled.
    public func cancel() {
        launched.value?.cancel()
    }

    /// Runs the launch to its end in the current task (starting it if needed) and throws if
    /// it did not complete: a required task failed (the error names it) or it was cancelled.
    /// Cancelling the current task cancels the launch. This is what an outer launcher calls.
    public func run() async throws {
        try start()
        let report = await report()
        switch report.outcome {
        case .completed: return
        case .cancelled: throw LaunchError.cancelled()
        case .failed(let error): throw LaunchError.from(error)
        }
    }

    // MARK: - Watching

    /// Every event of the launch, from its first, however late you ask; ends after
    /// ``GraphEvent/runFinished(_:at:)``. Times count from the start of the launch.
    public var events: EventSequence<GraphEvent> {
        EventSequence(journal: journal, startIndex: 0)
    }

    /// Tells `observer` about every task, from the first event, on `target`; events that
    /// arrive together are delivered in one hop.
    public func observe(on target: CallbackTarget = .mainActor, _ observer: some LaunchObserver) {
        journal.deliver(from: 0, on: target) { batch in
            for event in batch { observer.receive(event) }
        }
    }

    /// Waits until the readiness set `name` is ready, without blocking a thread.
    ///
    /// Returns ``LaunchReadiness/timedOut(after:)`` if `timeout` passes first (measured on the
    /// launcher's clock, from this call), and ``LaunchReadiness/failed(_:)`` if the set will
    /// never be ready (the launch ended first, or the name is unknown) or the waiting task is
    /// cancelled. Waiting before the launch starts is fine; the launch itself is unaffected.
    public func ready(_ name: String, timeout: Duration? = nil) async -> LaunchReadiness {
        guard state.withLock({ $0.plan.isReadiness(name) }) else { return .failed(.unknownReadiness(name)) }
        guard let timeout else { return await waitUntilReady(name) }
        let clock = self.clock
        return await withTaskGroup(of: LaunchReadiness?.self) { group in
            group.addTask { await self.waitUntilReady(name) }
            group.addTask {
                guard (try? await clock.sleep(for: timeout)) != nil else { return nil }
                return .timedOut(after: timeout)
            }
            var answer = LaunchReadiness.failed(.cancelled())
            for await result in group {
                guard let result else { continue }
                answer = result
                break
            }
            group.cancelAll()
            return answer
        }
    }

    private func waitUntilReady(_ name: String) async -> LaunchReadiness {
        guard let storage = await launched.wait() else { return .failed(.cancelled()) }
        guard let cell = storage.milestone(name) else { return .failed(.unknownReadiness(name)) }
        switch await cell.wait() {
        case .success(let at): return .ready(at: at)
        case .failure:
            // The run appends its last event before it fails the milestones that were not reached.
            guard case .runFinished(let outcome, _) = journal.snapshot.last else { return .failed(.cancelled()) }
            return .failed(.launchEnded(before: name, because: outcome))
        case nil: return .failed(.cancelled())
        }
    }

    /// Waits for the launch to end and returns its report: each task's wait and run time,
    /// executor and outcome, the total time and the critical path. Render it with
    /// ``TimelineRenderer`` or ``ChromeTrace``. If the awaiting task is cancelled, the launch
    /// is cancelled and its report returned once it has wound down.
    public func report() async -> RunReport {
        guard let storage = await launched.wait() else {
            // Cancelled before the launch started: there is nothing to wind down.
            return RunReport(outcome: .cancelled, tasks: [], milestones: [], duration: .zero, criticalPath: [])
        }
        if let report = await storage.reportCell.wait() { return report }
        storage.cancel()
        return await storage.reportCell.waitIgnoringCancellation()
    }
}
