public import Logging

/// Runs an app's start-up tasks: in the order added, or in parallel where tasks declare
/// dependencies; with readiness sets the first screen can await, a failure policy per task,
/// and a report of where the launch time went.
///
/// ```swift
/// let launcher = Launcher()
/// try launcher.add(PickNetworkChannel())
/// try launcher.add(LoadServerConfig())
/// try launcher.add(CheckForNewVersion())               // failure: .optional, so it is only reported
/// try launcher.addReadiness("firstScreen", after: ["channel", "config"])
/// let observation = launcher.observe(on: .mainActor, splashObserver)   // hears each task start and end
/// try launcher.start()
///
/// switch try await launcher.ready("firstScreen", timeout: .seconds(2)) {
/// case .ready: showHome()
/// case .timedOut, .failed: showOfflineHome()
/// }
/// print(TimelineRenderer().render(try await launcher.report()))
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
///   remove before the launch; adding during the launch takes it twice and hands the task to
///   the graph in between, never under it); each task costs the graph's one lock per
///   transition.
public final class Launcher: StartupTask, Sendable {
    public let name: String
    public let dependencies: TaskDependencies
    public let options: TaskOptions

    /// Never held while user code runs: a task's properties are read, and the user's clock
    /// asked the time, before it is taken. Never held while the graph's lock is taken either:
    /// additions during the launch are queued under it and handed to the graph after it.
    let state = Lock(LauncherStateMachine())
    private let log = GraphEventLog()
    /// Readiness deadlines: one timer task however many `ready(_:timeout:)` calls wait.
    private let timer: DeadlineTimer
    /// Makes the launch's own clock source when it starts, so its times count from then.
    let makeLaunchClock: @Sendable () -> ClockSource
    let telemetry: Telemetry
    /// Each undo's deadline during `shutdown()`.
    let undoTimeout: Duration
    /// Undo deadlines: one timer task however many undos run at once.
    let undoTimer: DeadlineTimer

    /// A launcher with no tasks.
    ///
    /// - Parameters:
    ///   - name: Its name as a task of an outer launcher.
    ///   - dependencies: As a task of an outer launcher; see ``StartupTask/dependencies``.
    ///   - options: As a task of an outer launcher; see ``StartupTask/options``. A launcher
    ///     launches once, so a retry would only report the same failure again.
    ///   - clock: Measures readiness deadlines, retry backoff, undo deadlines and the
    ///     report's times.
    ///   - undoTimeout: How long each task's ``StartupTask/undo()`` may take during
    ///     ``shutdown()`` before it is cancelled and reported as timed out. A negative value is
    ///     kept and reported by ``start()`` and ``run()`` (``LaunchError/Code/negativeDuration``),
    ///     and nothing is launched. As a task of an outer launcher, this launcher's whole
    ///     shutdown has the outer one's `undoTimeout`: give the outer one the longer.
    ///   - logger: Receives a structured log line per event; nothing is logged without one.
    ///   - telemetry: Receives the launch's span (named `name`, with an event per readiness
    ///     set), a span per task attempt and the launch's metrics; by default whatever the
    ///     process bootstrapped, read now.
    public init(
        _ name: String = "launch",
        dependsOn dependencies: TaskDependencies = .inOrderOfAddition,
        options: TaskOptions = TaskOptions(),
        clock: some Clock<Duration> = ContinuousClock(),
        undoTimeout: Duration = .seconds(30),
        logger: Logger? = nil,
        telemetry: Telemetry = .bootstrapped
    ) {
        self.undoTimeout = undoTimeout
        self.undoTimer = DeadlineTimer(clock: ClockSource(clock).purpose(.launchUndoTimeout))
        self.name = name
        self.telemetry = telemetry
        self.dependencies = dependencies
        self.options = options
        self.timer = DeadlineTimer(clock: ClockSource(clock).purpose(.launchReadyTimeout))
        self.makeLaunchClock = { ClockSource(clock) }
        if let logger {
            let sink = GraphEventLogger(logger)
            log.deliver(from: 0, on: .immediate) { event in sink.log(event) }
        }
    }

    deinit {
        // A launch holds its own journal until it ends. A launcher released before it started
        // has nothing that would ever end its journal: end it here, so the delivery tasks of
        // its observers (and of its logger) end too instead of waiting forever.
        if !state.withLock({ $0.hasStarted }) { log.finishUnattached() }
    }

    // MARK: - Adding and removing

    /// Adds a task, before or during the launch. Its name must be new, its dependencies
    /// added first (a task that names itself is a ``LaunchError/Code/cycle``), its timeout and
    /// retry backoff not negative (``LaunchError/Code/negativeDuration``) and its retry policy
    /// at least 1 attempt with a multiplier of at least 1
    /// (``LaunchError/Code/invalidConfiguration``). Throws ``LaunchError/Code/launchFinished``
    /// once the launch has ended.
    public func add(_ task: some StartupTask) throws(LaunchError) {
        // The task's properties are user code: read once, before the lock is taken.
        try add(.task(LaunchPlan.TaskSnapshot(task)))
    }

    /// Adds a readiness set: ready once every named task has ended, whatever its outcome,
    /// while the launch goes on. Await it with ``ready(_:timeout:)``; tasks may depend on it.
    public func addReadiness(_ name: String, after tasks: [String]) throws(LaunchError) {
        try add(.readiness(name, after: tasks))
    }

    private func add(_ entry: LaunchPlan.Entry) throws(LaunchError) {
        // During the launch the addition is compiled and queued under this lock, then handed
        // to the graph after it: the graph has a lock of its own, never taken under this one.
        switch try state.withLock({ (machine) throws(LaunchError) in try machine.add(entry) }) {
        case .kept: return
        case .deliver(let ticket, let run): try deliver(upTo: ticket, to: run, adding: entry.name)
        }
    }

    /// Hands the graph every addition queued up to `ticket`, oldest first, in one step, and
    /// returns once they are in it (whoever handed them over).
    ///
    /// Chained tasks must reach the graph in the order they were chained: a task's chain
    /// marker names the one before. Each caller therefore hands over the whole queue up to its
    /// own addition, never a later one alone, numbered by ticket; when two callers race, the
    /// graph skips what it holds already, so the second learns from the graph itself that its
    /// addition is in, even if the launch has ended since. So no addition waits for another
    /// thread, none takes the graph's lock under the launcher's, and an addition refused with
    /// ``LaunchError/Code/launchFinished`` is one the launch never held.
    private func deliver(upTo ticket: UInt64, to storage: GraphRunStorage, adding name: String?) throws(LaunchError) {
        guard let batch = state.withLock({ $0.additions(upTo: ticket) }), let last = batch.last else { return }
        // The launch's clock is user code: read with no lock held.
        let now = storage.clock.now
        let additions = batch.map { GraphRunStorage.NumberedAddition(number: $0.ticket, definitions: $0.definitions) }
        do throws(GraphError) {
            let pending = try storage.addLeavingWakeups(numbered: additions, now: now)
            state.withLock { $0.delivered(upTo: last.ticket) }
            pending.perform()
        } catch {
            if error.code == .runFinished { throw LaunchError.launchFinished(adding: name ?? error.taskID ?? "") }
            throw LaunchError.from(error)
        }
    }

    /// Removes a task that has not ended, and says what that did: before the launch, or
    /// before the task has started, it never runs (`prevented`); a running one is cancelled
    /// and abandoned at once (`abandoned`: launcher tasks run in tasks of their own); tasks
    /// that need it are skipped. Removing is no failure, even of a required task or of the
    /// required tasks it skips: the launch can still complete (``RunOutcome/completed``).
    /// Returns `nil` if the launcher has no task of that name.
    /// Before the launch its name is freed.
    @discardableResult
    public func remove(_ name: String) -> TaskRemoval? {
        switch state.withLock({ $0.remove(name) }) {
        case .prevented: return .prevented
        case .unknown: return nil
        case .remove(let run): return try? run.remove(name)
        }
    }

    /// Removes every task that has not ended; see
    /// ``remove(_:)``. Tasks added afterwards run as usual.
    public func removeAll() {
        guard let (run, tasks) = state.withLock({ $0.removeAll() }) else { return }
        for name in tasks { _ = try? run.remove(name) }
    }

    // MARK: - Launching

    /// Starts the launch in a task of its own and returns at once; later calls do nothing.
    /// Throws if a readiness set or dependency names a task removed before the launch, or if
    /// the launcher was made with a negative `undoTimeout`.
    public func start() throws(LaunchError) {
        // The initializer cannot throw, so its one bad value is reported here, where nothing
        // has started yet, rather than counted as zero.
        if undoTimeout < .zero { throw .negativeDuration("undoTimeout", undoTimeout, launcher: name) }
        guard !state.withLock({ $0.hasStarted }) else { return }
        // The launch's clock source asks the user's clock the time: made before the lock is
        // taken, and thrown away if another caller started the launch in between.
        let launchClock = makeLaunchClock()
        // Made outside the lock too: a metrics factory is user code.
        let instruments = RunInstruments(telemetry, kind: .launch, spanName: name)
        let run = GraphRunStorage(concurrencyLimit: nil, clock: launchClock, instruments: instruments, name: name)
        // Validated under the lock (a pure check, no lock of the graph's).
        guard let ticket = try state.withLock({ (machine) throws(LaunchError) in try machine.start(run) }) else {
            return
        }
        // The launch's events are its run's from now on: readers who came before wait in
        // the log until here.
        log.attach(run)
        var delivered = true
        do throws(LaunchError) {
            try deliver(upTo: ticket, to: run, adding: nil)
        } catch {
            // Not expected: the definitions were validated, the graph is new and not yet
            // driven. Should it happen, the launch ends cancelled rather than leaving
            // `ready` and `report` waiting for a launch that never began.
            delivered = false
        }
        let launch = state.withLock { $0.launch() }
        // Cancelled before the driver exists, so no task starts; and before anyone waiting
        // for the launch hears of it.
        if launch.cancel || !delivered { run.cancel() }
        for waiter in launch.waiters { waiter.resume(returning: ()) }
        run.startDriving()
    }

    /// Cancels the launch: pending tasks never start and running ones are cancelled.
    ///
    /// A cancel before ``start()`` (or while it runs) is remembered: the launch then ends as
    /// cancelled as soon as it starts, and none of its tasks runs. ``report()`` says
    /// ``RunOutcome/cancelled``, ``run()`` throws ``LaunchError/Code/cancelled``, and
    /// ``ready(_:timeout:)`` answers ``LaunchReadiness/failed(_:)`` with
    /// ``LaunchError/Code/launchEnded``. Tasks can still be added in between; they do not run
    /// either. A launch with no tasks has nothing to cancel, and completes.
    public func cancel() {
        cancel(byRun: false)
    }

    private func cancel(byRun: Bool) {
        switch state.withLock({ $0.cancel(byRun: byRun) }) {
        case .remembered: return
        case .cancel(let run): run.cancel()
        }
    }

    /// Runs the launch to its end in the current task (starting it if needed) and throws if
    /// it did not complete: a required task failed (the error names it) or it was cancelled.
    /// Cancelling the current task cancels the launch; from a task cancelled already, no task
    /// begins and it throws ``LaunchError/Code/cancelled``. This is what an outer launcher calls.
    public func run() async throws {
        // The handler is in place before the launch starts: a caller cancelled already has
        // cancelled it then (`start()` reads the request before the driver exists), so no
        // task begins.
        let outcome: RunOutcome
        do {
            outcome = try await withTaskCancellationHandler {
                try start()
                await afterStartingLaunch()
                // The handler cancels the launch; the wait goes on until it has wound down.
                return await launchReport(ignoringCancellation: true)?.outcome ?? .cancelled
            } onCancel: {
                cancel(byRun: true)
            }
        } catch {
            // Only `start()` throws, and then no launch began: the cancel of this task is not
            // left behind for a later `start()` (the handler has returned by now).
            state.withLock { $0.runDidNotStart() }
            throw error
        }
        switch outcome {
        case .completed: return
        case .cancelled: throw LaunchError.cancelled()
        case .failed(let error): throw LaunchError.from(error)
        }
    }

    // MARK: - Watching

    /// Every event of the launch, from its first, however late you ask; ends after
    /// ``GraphEvent/runFinished(_:at:)``. Times count from the start of the launch.
    public var events: EventSequence<GraphEvent> {
        log.events
    }

    /// Tells `observer` about every task, from the first event, on `target`; events that
    /// arrive together are delivered in one hop.
    ///
    /// Delivery ends after ``LaunchObserver/launchFinished(_:)``, when you cancel the returned
    /// handle, or when the launcher is released before it started (the observer then hears
    /// nothing more). A launch that started goes on to its end, observers included, however
    /// soon its launcher is released.
    @discardableResult
    public func observe(on target: CallbackTarget = .mainActor, _ observer: some LaunchObserver) -> ObservationHandle {
        log.deliver(from: 0, on: target) { event in observer.receive(event) }
    }

    /// Waits until the readiness set `name` is ready, without blocking a thread.
    ///
    /// ```swift
    /// switch try await launcher.ready("firstScreen", timeout: .seconds(2)) {
    /// case .ready: showHome()
    /// case .timedOut, .failed: showSkeleton()
    /// }
    /// ```
    ///
    /// Asking for a set that was never added is a mistake in the code, not an outcome of the
    /// launch: it throws ``LaunchError/Code/unknownReadiness`` naming the set, as
    /// ``GraphRun/reached(_:)`` throws for an unknown milestone; so does a negative `timeout`
    /// (``LaunchError/Code/negativeDuration``). Every outcome of a set that exists is returned:
    /// ``LaunchReadiness/timedOut(after:)`` if `timeout` passes first (measured on the
    /// launcher's clock, from this call), and ``LaunchReadiness/failed(_:)`` if the set will
    /// never be ready (the launch ended first) or the waiting task is cancelled. Waiting before
    /// the launch starts is fine; the launch itself is unaffected. But if `timeout` passes
    /// before ``start()`` was called, the answer is ``LaunchReadiness/failed(_:)`` with
    /// ``LaunchError/Code/notStarted``: the launch was never under way, which is usually a
    /// forgotten `start()`. Without a `timeout` the wait lasts until the launch starts and the
    /// set is ready, however long that is. A zero `timeout` asks without waiting.
    public func ready(_ name: String, timeout: Duration? = nil) async throws(LaunchError) -> LaunchReadiness {
        guard state.withLock({ $0.plan.isReadiness(name) }) else { throw .unknownReadiness(name) }
        if let timeout, timeout < .zero { throw .negativeTimeout(timeout, waitingFor: name) }
        guard let timeout else { return await waitUntilReady(name) }
        // Known already: answered even to a cancelled caller or with a zero timeout, and no
        // task is started to find out.
        if let known = answerNow(name) { return known }
        return await timer.race(
            { await self.waitUntilReady(name) },
            until: timer.clock.now + timeout,
            onDeadline: {
                self.hasStarted ? .timedOut(after: timeout) : .failed(self.notStarted(name, after: timeout))
            },
            onCancel: { .failed(.cancelled()) }
        )
    }

    /// Waits until the launch is launched and returns its run; `nil` when the waiting task is
    /// cancelled first.
    private func launched() async -> GraphRunStorage? {
        if let run = state.withLock({ $0.launched }) { return run }
        await state.suspend(
            { machine, waiter in machine.waitForLaunch(waiter) },
            cancelledNow: { _ in ((), ()) },
            cancelled: { @Sendable machine, id in
                guard let waiter = machine.stopWaitingForLaunch(id) else { return nil }
                return { waiter.resume(returning: ()) }
            })
        // Launched, or cancelled (`nil` unless the launch came first).
        return state.withLock { $0.launched }
    }

    /// Whether ``start()`` has begun the launch (it may still be handing it over).
    private var hasStarted: Bool {
        state.withLock { $0.hasStarted }
    }

    private func notStarted(_ readiness: String, after timeout: Duration) -> LaunchError {
        .notStarted(name, waitingFor: readiness, after: timeout)
    }

    private func waitUntilReady(_ name: String) async -> LaunchReadiness {
        guard let storage = await launched() else { return .failed(.cancelled()) }
        return answer(name, await storage.waitForMilestone(name), of: storage)
    }

    /// The answer if it is known without waiting.
    private func answerNow(_ name: String) -> LaunchReadiness? {
        guard let storage = state.withLock({ $0.launched }) else { return nil }
        return storage.milestoneOutcome(name).map { answer(name, $0, of: storage) }
    }

    private func answer(
        _ name: String, _ wait: GraphRunStorage.MilestoneWait, of storage: GraphRunStorage
    ) -> LaunchReadiness {
        switch wait {
        case .ended(.success(let at)): return .ready(at: at)
        case .ended(.failure):
            // The run has finished before it fails the milestones that were not reached.
            guard let outcome = storage.outcome else { return .failed(.cancelled()) }
            return .failed(.launchEnded(before: name, because: outcome))
        // Not expected: `ready` checked the name, and a readiness set is never removed.
        case .unknown: return .failed(.unknownReadiness(name))
        case .cancelled: return .failed(.cancelled())
        }
    }

    /// Waits for the launch to end and returns its report: each task's wait and run time,
    /// executor and outcome, the total time and the critical path. Render it with
    /// ``TimelineRenderer`` or ``ChromeTrace``. Once ``shutdown()`` has returned, the report
    /// carries its ``LaunchReport/shutdown`` too. Any number of tasks can wait.
    ///
    /// A waiter that gives up stops waiting and leaves the launch alone, as awaiting a `Task`
    /// leaves the task alone: if the waiting task is cancelled, this throws
    /// `CancellationError` at once and the launch goes on. To stop the launch, call
    /// ``cancel()``; ``run()`` binds the launch to the current task instead.
    ///
    /// ```swift
    /// try launcher.start()
    /// let report = try await launcher.report()  // throws only if this task is cancelled
    /// ```
    ///
    /// Called before ``start()``, it waits for the launch to start and then to end.
    /// ``shutdown()`` or ``cancel()`` before the start leave it waiting for the start too.
    public func report() async throws(CancellationError) -> LaunchReport {
        guard let run = await launchReport(ignoringCancellation: false) else { throw CancellationError() }
        return LaunchReport(run: run, shutdown: state.withLock { $0.shutdown.outcome })
    }

    /// The launch's report once it has ended; `nil` if the waiting task is cancelled first,
    /// or — `ignoringCancellation` — only if it is cancelled before the launch has started
    /// (for ``run()``, which started it, and the shutdown, which waits in a task of its own).
    private func launchReport(ignoringCancellation: Bool) async -> RunReport? {
        guard let storage = await launched() else { return nil }
        if ignoringCancellation { return await storage.reportCell.waitIgnoringCancellation() }
        return await storage.reportCell.wait()
    }

    /// The report for the shutdown, which must know what succeeded, so it waits whatever
    /// happens to the calling task: a launch not launched yet has nothing to undo.
    func reportIgnoringCancellation() async -> LaunchReport {
        guard let run = await launchReport(ignoringCancellation: true) else {
            var report = RunReport(outcome: .cancelled, tasks: [], milestones: [], duration: .zero, criticalPath: [])
            report.identity = RunIdentity(name: name)
            return LaunchReport(run: report, shutdown: nil)
        }
        return LaunchReport(run: run, shutdown: state.withLock { $0.shutdown.outcome })
    }
}
