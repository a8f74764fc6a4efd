/// A ``Launcher``'s state as a value: its plan, where its launch is, the cancels that came
/// before the launch, the additions on their way to the graph and its shutdown. Each operation
/// returns what the launcher must do once its lock is released (hand additions to the graph,
/// cancel or remove from the run, resume waiters); nothing here takes a lock, touches the
/// graph's lock or runs user code, so every transition can be driven by hand in a test.
struct LauncherStateMachine {
    /// Where the launch is: the one home of the launcher's run.
    enum Phase {
        case idle
        /// `start()` has made the run and is handing it the plan; a cancel is remembered, and
        /// `ready` and `report` wait, until it is ``launched(_:)``.
        case starting(GraphRunStorage)
        /// The run has the plan and has read the cancels that came before: from now on a
        /// cancel reaches it directly, and nobody waits for it.
        case launched(GraphRunStorage)
    }

    /// Definitions compiled during the launch, numbered by `ticket` in the order they were
    /// added, on their way to the graph.
    struct QueuedAddition {
        let ticket: UInt64
        let definitions: [NodeDefinition]
    }

    private(set) var plan = LaunchPlan()
    private(set) var phase = Phase.idle
    /// Tasks waiting for the launch to be ``Phase/launched(_:)``: `ready` and `report`.
    private var launchWaiters = WaiterSet<Void>()
    /// Set by a `cancel()` that came before the launch was ``Phase/launched(_:)``: the
    /// launch reads it as it is launched.
    private var cancelRequested = false
    /// The same, set by the cancellation of a task in `run()`; cleared when that call's own
    /// `start()` throws, so a later `start()` does not launch cancelled.
    private var cancelRequestedByRun = false
    /// Additions compiled during the launch that are not yet known to be in the graph, oldest
    /// first (see `Launcher.deliver(upTo:to:adding:)`).
    private var undeliveredAdditions: [QueuedAddition] = []
    private var nextTicket: UInt64 = 0
    /// Set by the first `shutdown()`; later calls wait for its report.
    private var isShuttingDown = false
    /// Settled when the shutdown has undone everything: what a second `shutdown()` and
    /// `report()` read. Not private only so the launcher can wait on it by key path.
    var shutdown = AwaitableSettlement<ShutdownReport>()

    // MARK: - Reading

    /// The run once it is launched.
    var launched: GraphRunStorage? {
        if case .launched(let run) = phase { run } else { nil }
    }

    /// Whether `start()` has begun the launch (it may still be handing it over).
    var hasStarted: Bool {
        if case .idle = phase { false } else { true }
    }

    /// The run, from the moment `start()` made it.
    private var run: GraphRunStorage? {
        switch phase {
        case .idle: nil
        case .starting(let run), .launched(let run): run
        }
    }

    // MARK: - Adding and removing

    enum AddAction {
        /// Kept in the plan for the launch.
        case kept
        /// Compiled and queued: hand the queue up to `ticket` to the run.
        case deliver(upTo: UInt64, to: GraphRunStorage)
    }

    /// Admits an entry: kept before the launch, compiled and queued for the run during it.
    mutating func add(_ entry: LaunchPlan.Entry) throws(LaunchError) -> AddAction {
        try plan.admit(entry)
        guard let run else {
            plan.keep(entry)
            return .kept
        }
        var definitions: [NodeDefinition] = []
        plan.compile(entry, into: &definitions)
        return .deliver(upTo: queue(definitions), to: run)
    }

    private mutating func queue(_ definitions: [NodeDefinition]) -> UInt64 {
        defer { nextTicket += 1 }
        undeliveredAdditions.append(QueuedAddition(ticket: nextTicket, definitions: definitions))
        return nextTicket
    }

    /// The queue up to `ticket`, to hand to the run in one step; `nil` once that addition is
    /// in the graph (another caller handed it over).
    func additions(upTo ticket: UInt64) -> [QueuedAddition]? {
        guard undeliveredAdditions.contains(where: { $0.ticket == ticket }) else { return nil }
        return Array(undeliveredAdditions.prefix { $0.ticket <= ticket })
    }

    /// Everything up to `ticket` is in the graph.
    mutating func delivered(upTo ticket: UInt64) {
        undeliveredAdditions.removeAll { $0.ticket <= ticket }
    }

    enum RemoveAction {
        /// Forgotten before the launch: it never runs.
        case prevented
        /// No task of that name.
        case unknown
        /// During the launch: remove it from the run.
        case remove(from: GraphRunStorage)
    }

    mutating func remove(_ name: String) -> RemoveAction {
        guard let run else { return plan.forget(name) ? .prevented : .unknown }
        return plan.isTask(name) ? .remove(from: run) : .unknown
    }

    /// Forgets every task before the launch (`nil`); during it, the run and the tasks it was
    /// handed, to remove from it.
    mutating func removeAll() -> (run: GraphRunStorage, tasks: [String])? {
        guard let run else {
            plan.forgetAllTasks()
            return nil
        }
        return (run, plan.compiledTasks)
    }

    // MARK: - Launching

    /// Begins the launch on `run`: compiles the plan, validates it (a launch that fails
    /// validation leaves the plan as it was) and queues it as the run's first addition.
    /// Returns that addition's ticket; `nil` if the launch has begun already.
    mutating func start(_ run: GraphRunStorage) throws(LaunchError) -> UInt64? {
        guard case .idle = phase else { return nil }
        var plan = self.plan
        let definitions = plan.compileEntries()
        do throws(GraphError) {
            try GraphValidation.validate(definitions)
        } catch {
            throw LaunchError.from(error)
        }
        self.plan = plan
        phase = .starting(run)
        return queue(definitions)
    }

    /// What ``launch()`` leaves to do once the lock is released.
    struct Launch {
        /// A cancel came before the run was launched: cancel it before anyone hears of it.
        let cancel: Bool
        /// `ready` and `report` calls waiting for the launch.
        let waiters: [WaiterSet<Void>.Waiter]
    }

    /// The run has the plan: it is launched. A cancel that came before this (before `start()`
    /// or while it ran) was remembered; one that comes after finds the run. Both are decided
    /// under the one lock, so no cancel falls between the two.
    mutating func launch() -> Launch {
        guard case .starting(let run) = phase else {
            preconditionFailure("a launcher's launch is launched once, after start() began it")
        }
        phase = .launched(run)
        return Launch(cancel: cancelRequested || cancelRequestedByRun, waiters: launchWaiters.removeAll())
    }

    enum CancelAction {
        /// Before the launch was launched: it reads the request then.
        case remembered
        case cancel(GraphRunStorage)
    }

    /// A cancel from the caller, or from the cancellation of a task in `run()` (`byRun`).
    mutating func cancel(byRun: Bool) -> CancelAction {
        if let launched { return .cancel(launched) }
        if byRun { cancelRequestedByRun = true } else { cancelRequested = true }
        return .remembered
    }

    /// `run()`'s own `start()` threw, so nothing was launched: its task's cancel is not left
    /// behind for a later `start()`.
    mutating func runDidNotStart() {
        cancelRequestedByRun = false
    }

    /// Registers a task waiting for the launch, or lets it go on at once once launched.
    mutating func waitForLaunch(_ waiter: WaiterSet<Void>.Waiter) -> SuspensionDecision<Void, Void> {
        if launched != nil { return .resume((), ()) }
        launchWaiters.insert(waiter)
        return .wait(())
    }

    /// Takes out waiter `id` (its task was cancelled); `nil` if the launch let it go already.
    mutating func stopWaitingForLaunch(_ id: UInt64) -> WaiterSet<Void>.Waiter? {
        launchWaiters.remove(id)
    }

    // MARK: - Shutting down

    enum ShutdownRole {
        /// A shutdown is under way: wait for its report.
        case join
        /// The first call. `cancel` is the run to cancel (once launched); `launched` says
        /// whether there is a launch to wait for (it may still be starting, and then cancels
        /// itself as it is launched).
        case first(cancel: GraphRunStorage?, launched: Bool)
    }

    mutating func beginShutdown() -> ShutdownRole {
        if isShuttingDown { return .join }
        isShuttingDown = true
        if let launched { return .first(cancel: launched, launched: true) }
        // Not launched yet: as with `cancel()`, the launch reads the request and cancels itself.
        cancelRequested = true
        return .first(cancel: nil, launched: hasStarted)
    }

    /// The shutdown's report is known; returns the waiters to resume.
    mutating func finishShutdown(_ report: ShutdownReport) -> [WaiterSet<Void>.Waiter] {
        shutdown.settle(report) ?? []
    }
}
