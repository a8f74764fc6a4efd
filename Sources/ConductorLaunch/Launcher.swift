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
/// let observation = launcher.observe(on: .mainActor, splashObserver)   // hears each task start and end
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
///   remove before the launch; adding during the launch takes it twice and hands the task to
///   the graph in between, never under it); each task costs the graph's one lock per
///   transition.
public final class Launcher: StartupTask, Sendable {
    public let name: String
    public let dependencies: [String]?
    public let isRequired: Bool

    enum Phase {
        case idle
        case launching(GraphRunStorage)
    }

    struct State {
        var plan = LaunchPlan()
        var phase = Phase.idle
        /// Set by a `cancel()` that came before the launch was under way: `start()` reads it,
        /// under this lock, before it lets `cancel()` reach the launch itself.
        var cancelRequested = false
        /// The same, set by the cancellation of a task in ``run()``; cleared when that call's
        /// own `start()` throws, so a later `start()` does not launch cancelled.
        var cancelRequestedByRun = false
        /// Settled by `start()` once it has handed over the launch's first wakeups and read
        /// `cancelRequested`: what `ready` and `report` wait for, and from then on `cancel()`
        /// cancels the launch directly.
        var launch = AwaitableSettlement<GraphRunStorage>()
        /// Set by the first `shutdown()`; later calls wait for its report.
        var isShuttingDown = false
        /// Settled when the shutdown has undone everything: what a second `shutdown()` and
        /// `report()` read.
        var shutdown = AwaitableSettlement<ShutdownReport>()
        /// Additions compiled during the launch that are not yet known to be in the graph,
        /// oldest first: see `deliver(upTo:to:adding:)`.
        private var undeliveredAdditions: [QueuedAddition] = []
        private var nextTicket: UInt64 = 0

        /// Queues definitions for the graph; returns their ticket.
        mutating func queue(_ definitions: [NodeDefinition]) -> UInt64 {
            defer { nextTicket += 1 }
            undeliveredAdditions.append(QueuedAddition(ticket: nextTicket, definitions: definitions))
            return nextTicket
        }

        /// The queue up to `ticket`, or `nil` once that addition is in the graph.
        func undelivered(upTo ticket: UInt64) -> [QueuedAddition]? {
            guard undeliveredAdditions.contains(where: { $0.ticket == ticket }) else { return nil }
            return Array(undeliveredAdditions.prefix { $0.ticket <= ticket })
        }

        /// Everything up to `ticket` is in the graph.
        mutating func delivered(upTo ticket: UInt64) {
            undeliveredAdditions.removeAll { $0.ticket <= ticket }
        }
    }

    struct QueuedAddition {
        let ticket: UInt64
        let definitions: [NodeDefinition]
    }

    /// Never held while user code runs: a task's properties are read, and the user's clock
    /// asked the time, before it is taken. Never held while the graph's lock is taken either:
    /// additions during the launch are queued under it and handed to the graph after it.
    let state = Lock(State())
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
    ///   - isRequired: As a task of an outer launcher; see ``StartupTask/isRequired``.
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
        dependsOn dependencies: [String]? = nil,
        isRequired: Bool = true,
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
        self.isRequired = isRequired
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
        let neverStarted = state.withLock { state in
            if case .idle = state.phase { return true }
            return false
        }
        if neverStarted { log.finishUnattached() }
    }

    // MARK: - Adding and removing

    /// Adds a task, before or during the launch. Its name must be new, its dependencies
    /// added first (a task that names itself is a ``LaunchError/Code/cycle``), its retry
    /// backoff not negative (``LaunchError/Code/negativeDuration``) and its retry policy at
    /// least 1 attempt with a multiplier of at least 1
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
        let queued = try state.withLock { (state) throws(LaunchError) -> (GraphRunStorage, UInt64)? in
            try state.plan.admit(entry)
            switch state.phase {
            case .idle:
                state.plan.keep(entry)
                return nil
            case .launching(let storage):
                var definitions: [NodeDefinition] = []
                state.plan.compile(entry, into: &definitions)
                return (storage, state.queue(definitions))
            }
        }
        guard let (storage, ticket) = queued else { return }
        try deliver(upTo: ticket, to: storage, adding: entry.name)
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
        guard let batch = state.withLock({ $0.undelivered(upTo: ticket) }), let last = batch.last else { return }
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
        enum Step {
            case forgotten(Bool)
            case remove(GraphRunStorage)
            case unknown
        }
        let step = state.withLock { state -> Step in
            switch state.phase {
            case .idle:
                return .forgotten(state.plan.forget(name))
            case .launching(let storage):
                return state.plan.isTask(name) ? .remove(storage) : .unknown
            }
        }
        switch step {
        case .forgotten(let forgot): return forgot ? .prevented : nil
        case .remove(let storage): return try? storage.remove(name)
        case .unknown: return nil
        }
    }

    /// Removes every task that has not ended; see
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
    /// Throws if a readiness set or dependency names a task removed before the launch, or if
    /// the launcher was made with a negative `undoTimeout`.
    public func start() throws(LaunchError) {
        // The initializer cannot throw, so its one bad value is reported here, where nothing
        // has started yet, rather than counted as zero.
        if undoTimeout < .zero { throw .negativeDuration("undoTimeout", undoTimeout, launcher: name) }
        guard state.withLock({ if case .idle = $0.phase { true } else { false } }) else { return }
        // The launch's clock source asks the user's clock the time: made before the lock is
        // taken, and thrown away if another caller started the launch in between.
        let launchClock = makeLaunchClock()
        // Made outside the lock too: a metrics factory is user code.
        let instruments = RunInstruments(telemetry, kind: .launch, spanName: name)
        let storage = GraphRunStorage(
            concurrencyLimit: nil, clock: launchClock, instruments: instruments, name: name)
        let ticket = try state.withLock { (state) throws(LaunchError) -> UInt64? in
            guard case .idle = state.phase else { return nil }
            // Compiled on a copy and validated here (a pure check, no lock of the graph's), so
            // a launch that fails validation leaves the plan as it was.
            var plan = state.plan
            let definitions = plan.compileEntries()
            do throws(GraphError) {
                try GraphValidation.validate(definitions)
            } catch {
                throw LaunchError.from(error)
            }
            state.plan = plan
            state.phase = .launching(storage)
            return state.queue(definitions)
        }
        guard let ticket else { return }
        // The launch's events are its run's from now on: readers who came before wait in
        // the log until here.
        log.attach(storage)
        var delivered = true
        do throws(LaunchError) {
            try deliver(upTo: ticket, to: storage, adding: nil)
        } catch {
            // Not expected: the definitions were validated, the graph is new and not yet
            // driven. Should it happen, the launch ends cancelled rather than leaving
            // `ready` and `report` waiting for a launch that never began.
            delivered = false
        }
        // A cancel that came before this point (before `start()`, or while it ran) left a
        // flag instead of finding the launch; one that comes after finds the launch. Both
        // are decided under the lock, so no cancel falls between the two.
        let (cancelled, waiters) = state.withLock { state in
            (state.cancelRequested || state.cancelRequestedByRun, state.launch.settle(storage) ?? [])
        }
        // Cancelled before the driver exists, so no task starts; and before anyone waiting
        // for the launch hears of it.
        if cancelled || !delivered { storage.cancel() }
        for waiter in waiters { waiter.resume(returning: ()) }
        storage.startDriving()
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
        let launch = state.withLock { state -> GraphRunStorage? in
            if let storage = state.launch.outcome { return storage }
            if byRun { state.cancelRequestedByRun = true } else { state.cancelRequested = true }
            return nil
        }
        launch?.cancel()
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
                return await report().outcome
            } onCancel: {
                cancel(byRun: true)
            }
        } catch {
            // Only `start()` throws, and then no launch began: the cancel of this task is not
            // left behind for a later `start()` (the handler has returned by now).
            state.withLock { $0.cancelRequestedByRun = false }
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
    /// Returns ``LaunchReadiness/timedOut(after:)`` if `timeout` passes first (measured on the
    /// launcher's clock, from this call), and ``LaunchReadiness/failed(_:)`` if the set will
    /// never be ready (the launch ended first, or the name is unknown) or the waiting task is
    /// cancelled. Waiting before the launch starts is fine; the launch itself is unaffected.
    /// But if `timeout` passes before ``start()`` was called, the answer is
    /// ``LaunchReadiness/failed(_:)`` with ``LaunchError/Code/notStarted``: the launch was
    /// never under way, which is usually a forgotten `start()`. Without a `timeout` the wait
    /// lasts until the launch starts and the set is ready, however long that is.
    /// A zero `timeout` asks without waiting; a negative one answers at once with
    /// ``LaunchReadiness/failed(_:)`` and ``LaunchError/Code/negativeDuration``.
    public func ready(_ name: String, timeout: Duration? = nil) async -> LaunchReadiness {
        guard state.withLock({ $0.plan.isReadiness(name) }) else { return .failed(.unknownReadiness(name)) }
        if let timeout, timeout < .zero { return .failed(.negativeTimeout(timeout, waitingFor: name)) }
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

    /// Whether ``start()`` has begun the launch (it may still be handing it over).
    private var hasStarted: Bool {
        state.withLock { if case .idle = $0.phase { false } else { true } }
    }

    private func notStarted(_ readiness: String, after timeout: Duration) -> LaunchError {
        .notStarted(name, waitingFor: readiness, after: timeout)
    }

    private func waitUntilReady(_ name: String) async -> LaunchReadiness {
        guard let storage = await state.wait(for: \.launch) else { return .failed(.cancelled()) }
        return answer(name, await storage.waitForMilestone(name), of: storage)
    }

    /// The answer if it is known without waiting.
    private func answerNow(_ name: String) -> LaunchReadiness? {
        guard let storage = state.withLock({ $0.launch.outcome }) else { return nil }
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
        case .unknown: return .failed(.unknownReadiness(name))
        case .cancelled: return .failed(.cancelled())
        }
    }

    /// Waits for the launch to end and returns its report: each task's wait and run time,
    /// executor and outcome, the total time and the critical path. Render it with
    /// ``TimelineRenderer`` or ``ChromeTrace``. If the awaiting task is cancelled, the launch
    /// is cancelled and its report returned once it has wound down. Once ``shutdown()`` has
    /// returned, the report carries its ``LaunchReport/shutdown`` too.
    ///
    /// Called before ``start()``, it waits for the launch to start and then to end: with no
    /// `start()` it waits until the awaiting task is cancelled (and then returns a
    /// ``RunOutcome/cancelled`` report with no tasks). ``shutdown()`` or ``cancel()`` before
    /// the start leave it waiting for the start too.
    public func report() async -> LaunchReport {
        let run = await launchReport()
        return LaunchReport(run: run, shutdown: state.withLock { $0.shutdown.outcome })
    }

    private func launchReport() async -> RunReport {
        guard let storage = await state.wait(for: \.launch) else {
            // Cancelled before the launch started: there is nothing to wind down.
            var report = RunReport(outcome: .cancelled, tasks: [], milestones: [], duration: .zero, criticalPath: [])
            report.identity = RunIdentity(name: name)
            return report
        }
        if let report = await storage.reportCell.wait() { return report }
        storage.cancel()
        return await storage.reportCell.waitIgnoringCancellation()
    }
}
