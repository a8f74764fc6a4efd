import Instrumentation
import Synchronization
import Tracing

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Applies the state machine's transitions under one lock and runs the work they call for.
///
/// One driver task owns a discarding task group and starts workers; a worker runs a task,
/// records its end, and goes straight on with the next ready task, so a chain of tasks costs
/// one lock per task and no task creation. Workers start inline on the driver's thread and
/// hand control back the moment their task suspends, which keeps waiting work parallel
/// without paying a thread hop for work that never waits; a helper on a thread of its own
/// starts only once bodies run long enough to pay for sharing tasks between cores.
package final class GraphRunStorage: Sendable {
    /// The state machine and, inside it, the run's journal: one lock, never held while
    /// another is taken.
    /// Internal only for this type's own extensions (`GraphRunStorage+*.swift`).
    let state: Lock<GraphStateMachine>
    package let clock: ClockSource
    /// Every timed attempt's timeout, on one timer task for the run.
    let timer: DeadlineTimer
    package let reportCell = OnceCell<RunReport>()
    /// The task that drives the run: `cancel()` cancels it, which cancels every worker at
    /// once, so a body that checks for cancellation after `cancel()` returned sees it.
    private let driver = Lock<Task<Void, Never>?>(nil)
    /// Spans and metrics, or `nil` when the run's ``Telemetry`` records nothing.
    let instruments: RunInstruments?
    /// Whether each attempt gets a span: decided once, so a plain task without tracing takes
    /// the fast path after one load and one test.
    private let tracesAttempts: Bool
    /// What the report says ran: made when the run is, which is when it starts.
    private let identity: RunIdentity

    convenience init(
        definitions: [NodeDefinition],
        compiled: CompiledGraph? = nil,
        concurrencyLimit: Int?,
        clock: ClockSource,
        instruments: RunInstruments? = nil,
        staysOpen: Bool = false
    ) {
        self.init(
            concurrencyLimit: concurrencyLimit, clock: clock, instruments: instruments, name: nil, staysOpen: staysOpen)
        var effects = GraphEffects()
        transition { machine in machine.insert(definitions, compiled: compiled, now: 0, effects: &effects) }
        apply(effects)
    }

    /// A run with no nodes yet: a launcher makes one when its launch starts (its readers, who
    /// may have come earlier, wait in its ``GraphEventLog`` until then) and adds the first
    /// nodes with ``addLeavingWakeups(_:now:)``. Until something is added, the run neither
    /// starts nor finishes.
    package init(
        concurrencyLimit: Int?, clock: ClockSource, instruments: RunInstruments? = nil, name: String?,
        staysOpen: Bool = false
    ) {
        self.identity = RunIdentity(name: name)
        self.clock = clock
        self.instruments = instruments
        self.tracesAttempts = instruments?.tracer != nil
        self.timer = DeadlineTimer(clock: clock.purpose(.taskTimeout))
        self.state = Lock(
            GraphStateMachine(
                concurrencyLimit: concurrencyLimit ?? .max, parallelWorkers: Self.parallelWorkers, staysOpen: staysOpen)
        )
    }

    /// Workers started on threads of their own: one per core but the driver's.
    private static let parallelWorkers = max(1, ProcessInfo.processInfo.activeProcessorCount - 1)

    // MARK: - Transitions

    /// Readers parked on the journal, to resume once the lock is released.
    typealias Readers = [WaiterSet<Void>.Waiter]

    /// Runs `body` under the lock; readers parked on the journal are woken after the lock is
    /// released if it recorded something. The events are in the journal when the lock is
    /// released, so a caller that reads it afterwards sees all that happened before.
    @discardableResult
    func transition<Value, Failure: Error>(
        _ body: (inout GraphStateMachine) throws(Failure) -> Value
    ) throws(Failure) -> Value {
        let (value, readers) = try transitionLeavingReaders(body)
        Self.wake(readers)
        return value
    }

    private func transitionLeavingReaders<Value, Failure: Error>(
        _ body: (inout GraphStateMachine) throws(Failure) -> Value
    ) throws(Failure) -> (Value, Readers?) {
        try state.withLock {
            (machine) throws(Failure) in
            let endIndex = machine.journal.endIndex
            let value = try body(&machine)
            return (value, machine.journal.takeReaders(ifGrownFrom: endIndex))
        }
    }

    @inline(__always)
    private static func wake(_ readers: Readers?) {
        guard let readers else { return }
        for reader in readers { reader.resume(returning: ()) }
    }

    /// Inlined, so the common case (nothing to do) costs one test where it is called.
    @inline(__always)
    func apply(_ effects: GraphEffects) {
        guard !effects.isEmpty else { return }
        perform(effects)
    }

    @inline(never)
    private func perform(_ effects: GraphEffects) {
        effects.resumeDriver?.resume(returning: ())
        for body in effects.cancelBodies { body.cancel() }
        for waiter in effects.resumeWaiters { waiter.resume(returning: ()) }
        // Outside every lock: cancelling runs the body's cancellation handlers (user code).
        // The worker is pinned until the unpin, so its task is alive here (`WorkerRegistry`).
        for (task, id) in effects.cancelWorkers {
            task.cancel()
            state.withLock { $0.workers.registry.unpin(id) }?.resume(returning: ())
        }
        if let lists = effects.lists, lists.hasPermitWork { TaskLimit.perform(lists, for: self) }
        if let start = effects.timerStart { GraphDeadlineTimer.start(start, for: self) }
        if let instruments {
            for (name, time) in effects.reachedMilestones { instruments.milestoneReached(name, at: time) }
        }
    }

    // MARK: - Driving

    /// Starts the task that drives the run to its end. With a tracer, the run's span starts
    /// here, a child of the caller's `ServiceContext`, and the driver (so every worker, and
    /// every body) runs with the span's context as its `ServiceContext.current`.
    @discardableResult
    package func startDriving() -> Task<Void, Never> {
        // A cancel before this point has stopped the state machine already; the driver
        // sees that when it starts.
        let task: Task<Void, Never>
        if let context = instruments?.startRun() {
            // `Task {}` copies the task-local values bound here.
            task = ServiceContext.$current.withValue(context) {
                Task(executorPreference: TaskPlacement.executor) { await self.drive() }
            }
        } else {
            task = Task(executorPreference: TaskPlacement.executor) { await self.drive() }
        }
        driver.withLock { $0 = task }
        return task
    }

    /// Runs the graph to its end in the calling task; cancelling that task cancels the run.
    private func drive() async {
        await withTaskCancellationHandler {
            await withDiscardingTaskGroup { group in
                while true {
                    let now = clock.nanoseconds
                    var effects = GraphEffects()
                    let action = transition { machine in machine.nextForDriver(now: now, effects: &effects) }
                    apply(effects)
                    switch action {
                    case .spawn(let assignment, let inline):
                        // `addImmediateTask` needs the OS 26 concurrency runtime (the 6.2 tools
                        // version only guarantees it compiles). Before that an inline worker
                        // becomes an ordinary child task: same result, one thread hop more.
                        // A child task inherits the run's task-local values; its priority is the
                        // task's own, so a body runs at the priority it was added with.
                        let priority = assignment.spec.priority
                        if inline, #available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *) {
                            group.addImmediateTask(priority: priority) { await self.work(assignment, helper: false) }
                        } else {
                            group.addTask(priority: priority) { await self.work(assignment, helper: !inline) }
                        }
                    case .cancelAll:
                        group.cancelAll()
                    case .wait:
                        // Not cancellable: cancelling the driver stops the run (`onCancel`),
                        // which gives it work and resumes it.
                        await state.suspendIgnoringCancellation { (machine: inout GraphStateMachine, driver) in
                            machine.parkDriver(driver)
                        }
                    case .finish:
                        // Every node has ended; a worker still sleeping out the backoff of a
                        // task removed meanwhile has nothing left to do, and one let go by a
                        // deadline may still be in its body: the report waits for neither.
                        group.cancelAll()
                        let report = makeReport()
                        // Spans end and metrics are recorded before the report can be read,
                        // so whoever awaited the report sees them.
                        instruments?.finish(report)
                        reportCell.settle(report)
                        return
                    }
                }
            }
        } onCancel: {
            cancel()
        }
    }

    /// Runs `first`, then each next ready task the state machine hands back. A worker was
    /// created at its first task's priority; a next task of another priority runs in a child
    /// task created at that priority, so what a body sees never depends on which worker ran it.
    ///
    /// `helper` says whether this worker was started on a thread of its own (see
    /// ``GraphStateMachine/nextForDriver(now:)``).
    private func work(_ first: GraphStateMachine.Assignment, helper: Bool) async {
        // Registered before any body, so a removal can cancel this worker's task. A helper
        // starts on a thread of its own, after a hop: a stop that came meanwhile must not see
        // the body of the task it was handed begin; nor must a removal that came before this.
        let task = withUnsafeCurrentTask { $0.map(WorkerTask.init) }
        guard state.withLock({ $0.registerWorker(running: first.node, task: task, helper: helper).starts }) else {
            return await retire(endUnstarted(first, helper: helper))
        }
        let workerPriority = first.spec.priorityRank
        var assignment = first
        // One context for the worker's plain tasks, its node set per task: it holds the
        // storage for the whole chain, so a task neither retains nor releases it.
        var context = TaskContext(node: first.node, attempt: 1, storage: self)
        while true {
            let next: GraphWorkers.WorkerNext
            if assignment.spec.priorityRank == workerPriority {
                // The common case in this frame, not in `runToEnd`'s: each async frame
                // costs an allocation and an executor check on entry and on return.
                if assignment.spec.isPlain, !tracesAttempts {
                    context.node = assignment.node
                    // The report's times are the body's own: read just before it is called and
                    // just after it returns, outside the lock, so neither a wait for the lock
                    // nor the hop to this worker counts as the task's run time.
                    let startedAt = clock.nanoseconds
                    do {
                        switch assignment.spec.operationKind {
                        case .globalVoid:
                            try await assignment.spec.callVoid(context)
                            let endedAt = clock.nanoseconds
                            next = end(
                                assignment.node, startedAt: startedAt, endedAt: endedAt, helper: helper,
                                outcome: .succeeded)
                        case .global:
                            let result = try await assignment.spec.call(context)
                            let endedAt = clock.nanoseconds
                            next = end(
                                assignment.node, startedAt: startedAt, endedAt: endedAt, helper: helper,
                                returning: result)
                        // Never plain (`TaskSpec.isPlain`); called here, it would still be right.
                        case .mainActor:
                            let result = try await assignment.spec.call(context)
                            let endedAt = clock.nanoseconds
                            next = end(
                                assignment.node, startedAt: startedAt, endedAt: endedAt, helper: helper,
                                returning: result)
                        }
                    } catch {
                        let endedAt = clock.nanoseconds
                        next = end(
                            assignment.node, startedAt: startedAt, endedAt: endedAt, helper: helper,
                            outcome: Self.outcome(of: error))
                    }
                } else {
                    next = await runToEnd(assignment, helper: helper)
                }
            } else {
                next = await runInChild(assignment, helper: helper)
            }
            guard case .run(let next) = next else { return await retire(next) }
            assignment = next
        }
    }

    /// The worker's last act, its registry entry closed by the transition that gave it no next
    /// task: it waits while a removal that pinned it has yet to cancel its task (see
    /// ``WorkerRegistry``).
    private func retire(_ next: GraphWorkers.WorkerNext) async {
        guard case .endAfterUnpin(let worker) = next else { return }
        await state.suspendIgnoringCancellation { (machine: inout GraphStateMachine, waiter) in
            machine.workers.registry.awaitUnpinned(worker, waiter)
        }
    }

    /// Runs a task of another priority than its worker's in a child task at its own.
    /// Out of line, so `work` never handles the resilient `TaskPriority` or the group's
    /// generic result.
    @inline(never)
    private func runInChild(_ assignment: GraphStateMachine.Assignment, helper: Bool) async
        -> GraphWorkers.WorkerNext
    {
        await withTaskGroup(of: GraphWorkers.WorkerNext.self) { group in
            group.addTask(priority: assignment.spec.priority) {
                guard self.isRunning else { return self.endUnstarted(assignment, helper: helper) }
                return await self.runToEnd(assignment, helper: helper)
            }
            return await group.next() ?? .end
        }
    }

    /// Runs one task, records its end, and returns the next ready task for this worker.
    private func runToEnd(_ assignment: GraphStateMachine.Assignment, helper: Bool) async
        -> GraphWorkers.WorkerNext
    {
        let ended = await AttemptLoop(storage: self, assignment: assignment).run()
        // A result comes only with success.
        if let result = ended.result {
            return end(
                assignment.node, startedAt: ended.startedAt, endedAt: ended.endedAt, helper: helper, returning: result)
        }
        return end(
            assignment.node, startedAt: ended.startedAt, endedAt: ended.endedAt, helper: helper,
            outcome: ended.outcome)
    }

    /// Whether the run has not stopped: asked after a hop — to a new task (a helper, a child
    /// at another priority) or to the main actor — where a stop may have come between the
    /// hand-over and the body, so the body of a run stopped meanwhile never begins.
    var isRunning: Bool { state.withLock { $0.isRunning } }

    /// Ends a task handed to this worker whose body never began, because the run stopped
    /// during the hop to it.
    private func endUnstarted(_ assignment: GraphStateMachine.Assignment, helper: Bool)
        -> GraphWorkers.WorkerNext
    {
        end(
            assignment.node, startedAt: GraphNodeTable.Node.never, endedAt: clock.nanoseconds, helper: helper,
            outcome: .cancelled)
    }

    /// Records the end of `node` and returns the next ready task for this worker: the hot
    /// transition, written out rather than through the generic `transition`. Never inlined
    /// into the async worker: there, every non-trivial value (the effects, the readers) is
    /// copied and destroyed through its type's metadata, here with plain retains. No result
    /// travels with it: most tasks return nothing, and an optional existential is copied,
    /// tested and destroyed through value witnesses, even when it is `nil`.
    ///
    /// `startedAt` and `endedAt` were read by the worker around the body (`never` for a body
    /// that never started); `endedAt` is also the time of everything this transition records.
    @inline(never)
    private func end(_ node: Int, startedAt: Int64, endedAt: Int64, helper: Bool, outcome: TaskOutcome)
        -> GraphWorkers.WorkerNext
    {
        var effects = GraphEffects()
        let (next, readers) = state.withLock { machine in
            let endIndex = machine.journal.endIndex
            let next = machine.completeOnWorker(
                node, outcome: outcome, startedAt: startedAt, now: endedAt, helper: helper, effects: &effects)
            return (next, machine.journal.takeReaders(ifGrownFrom: endIndex))
        }
        Self.wake(readers)
        apply(effects)
        return next
    }

    /// Records the success of `node`, keeping its result for dependents, and returns the next
    /// ready task for this worker.
    @inline(never)
    private func end(_ node: Int, startedAt: Int64, endedAt: Int64, helper: Bool, returning result: any Sendable)
        -> GraphWorkers.WorkerNext
    {
        var effects = GraphEffects()
        let (next, readers) = state.withLock { machine in
            let endIndex = machine.journal.endIndex
            machine.table.keep(result, of: node)
            let next = machine.completeOnWorker(
                node, outcome: .succeeded, startedAt: startedAt, now: endedAt, helper: helper, effects: &effects)
            return (next, machine.journal.takeReaders(ifGrownFrom: endIndex))
        }
        Self.wake(readers)
        apply(effects)
        return next
    }

    /// How a body that threw ended: cancelled if it threw `CancellationError` or was
    /// cancelled, failed otherwise.
    private static func outcome(of error: any Error) -> TaskOutcome {
        if error is CancellationError || Task.isCancelled { return .cancelled }
        return .failed(error)
    }

    // MARK: - Outside requests

    package func cancel() {
        let now = clock.nanoseconds
        var effects = GraphEffects()
        transition { $0.cancel(now: now, effects: &effects) }
        apply(effects)
        driver.withLock { $0 }?.cancel()
    }

    func close() { update { [now = clock.nanoseconds] in $0.close(now: now, effects: &$1) } }

    func add(_ definitions: [NodeDefinition]) throws(GraphError) {
        try addLeavingWakeups(definitions, now: clock.now).perform()
    }

    /// What an addition leaves to do (wake readers, the driver, milestone waiters) once the
    /// caller has released a lock of its own.
    package struct PendingResumptions: Sendable {
        fileprivate let storage: GraphRunStorage
        fileprivate let readers: Readers?
        fileprivate let effects: GraphEffects

        package func perform() {
            GraphRunStorage.wake(readers)
            storage.apply(effects)
        }
    }

    /// Adds definitions but leaves the wakeups to the caller, so a caller that must order its
    /// additions under a lock of its own (a launcher chaining tasks in the order added) never
    /// resumes anything while holding it. `now` is read from ``clock`` by the caller before it
    /// takes that lock: a user's clock is user code.
    package func addLeavingWakeups(_ definitions: [NodeDefinition], now: Duration) throws(GraphError)
        -> PendingResumptions
    {
        // Everything that needs only the definitions is checked before the lock is taken;
        // under it, only the lookups in the nodes the run already has.
        let checked = try GraphValidation.check(definitions)
        var effects = GraphEffects()
        let (_, readers) = try transitionLeavingReaders { (machine) throws(GraphError) in
            guard machine.isRunning else {
                throw .runFinished(adding: definitions.first?.id ?? "")
            }
            try checked.check(against: machine.topology)
            machine.insert(definitions, now: now.nanoseconds, effects: &effects)
        }
        return PendingResumptions(storage: self, readers: readers, effects: effects)
    }

    /// Definitions a caller numbered, in the order it means them added.
    package struct NumberedAddition: Sendable {
        package let number: UInt64
        package let definitions: [NodeDefinition]

        package init(number: UInt64, definitions: [NodeDefinition]) {
            self.number = number
            self.definitions = definitions
        }
    }

    /// Adds numbered additions, oldest first, skipping those the run holds already (any
    /// numbered up to the last one added): callers that race to hand over the same queue
    /// learn from the run which part of it is in, and a caller whose addition another caller
    /// handed over returns as if it had added it, however the run has ended since. Throws
    /// ``GraphError/Code-swift.struct/runFinished`` only for additions the run does not hold.
    package func addLeavingWakeups(numbered additions: [NumberedAddition], now: Duration) throws(GraphError)
        -> PendingResumptions
    {
        let definitions = additions.flatMap(\.definitions)
        let checked = try GraphValidation.check(definitions)
        var effects = GraphEffects()
        let (_, readers) = try transitionLeavingReaders { (machine) throws(GraphError) in
            let held = machine.lastAdditionNumber
            let fresh = additions.drop { addition in held.map { addition.number <= $0 } ?? false }
            guard let last = fresh.last else { return }
            let skipped = definitions.count - fresh.reduce(0) { $0 + $1.definitions.count }
            guard machine.isRunning else {
                throw .runFinished(adding: definitions.dropFirst(skipped).first?.id ?? "")
            }
            try checked.check(against: machine.topology, skippingFirst: skipped)
            machine.insert(Array(definitions.dropFirst(skipped)), now: now.nanoseconds, effects: &effects)
            machine.lastAdditionNumber = last.number
        }
        return PendingResumptions(storage: self, readers: readers, effects: effects)
    }

    package func remove(_ id: String) throws(GraphError) -> TaskRemoval {
        let now = clock.nanoseconds
        var effects = GraphEffects()
        let removal = transition { $0.remove(id, now: now, effects: &effects) }
        apply(effects)
        guard let removal else { throw .unknownTask(id) }
        return removal
    }

    func id(of node: Int) -> String { state.withLock { $0.id(of: node) } }

    func result(of id: String) -> (any Sendable)? { state.withLock { $0.result(of: id) } }

    /// How the run ended, once it has.
    package var outcome: RunOutcome? { state.withLock { $0.outcome } }

    /// How waiting for a milestone ended.
    package enum MilestoneWait {
        /// The run has no milestone of that name.
        case unknown
        /// The waiting task was cancelled first.
        case cancelled
        /// Reached at a time, or missed.
        case ended(Result<Duration, GraphError>)
    }

    /// The outcome of milestone `name` if it is decided; `.unknown` for a name the run does
    /// not have, `nil` while it is neither reached nor missed.
    package func milestoneOutcome(_ name: String) -> MilestoneWait? {
        switch state.withLock({ $0.milestones.outcome(name) }) {
        case nil: .unknown
        case .some(nil): nil
        case .some(.some(let outcome)): .ended(outcome)
        }
    }

    /// Waits until milestone `name` is reached or missed; the run's own state machine decides
    /// it, under the run's lock.
    package func waitForMilestone(_ name: String) async -> MilestoneWait {
        if let decided = milestoneOutcome(name) { return decided }
        await suspendCancellably(
            { $0.milestones.wait(for: name, $1) }, remove: { $0.milestones.removeWaiter(name, id: $1) })
        // Decided, or cancelled (still undecided unless the outcome came first).
        return milestoneOutcome(name) ?? .cancelled
    }

    /// A transition whose effects are performed once the lock is released.
    @discardableResult
    func update<Value, Failure: Error>(
        _ body: (inout GraphStateMachine, inout GraphEffects) throws(Failure) -> Value
    ) throws(Failure) -> Value {
        var effects = GraphEffects()
        let value = try transition { (machine) throws(Failure) in try body(&machine, &effects) }
        apply(effects)
        return value
    }

    /// Parks the caller, cancelled or not, if `park` returns `true`, until a transition resumes it.
    func park(_ park: (inout GraphStateMachine, WaiterSet<Void>.Waiter, inout GraphEffects) -> Bool) async {
        await state.suspendIgnoringCancellation(
            { (machine: inout GraphStateMachine, waiter: WaiterSet<Void>.Waiter) in
                var effects = GraphEffects()
                return park(&machine, waiter, &effects) ? .wait(effects) : .resume((), effects)
            }, perform: { apply($0) })
    }

    /// Reads the machine under the lock.
    func read<Value>(_ body: (borrowing GraphStateMachine) -> Value) -> Value { state.withLock { body($0) } }

    /// Waits until a transition resumes the waiter `register` keeps, or `remove` takes it out
    /// on cancellation; the caller then reads what happened under the lock.
    func suspendCancellably(
        _ register: (inout GraphStateMachine, WaiterSet<Void>.Waiter) -> SuspensionDecision<Void, Void>,
        remove: @escaping @Sendable (inout GraphStateMachine, UInt64) -> WaiterSet<Void>.Waiter?
    ) async {
        await state.suspend(
            register, cancelledNow: { _ in ((), ()) },
            cancelled: { @Sendable machine, id in
                guard let waiter = remove(&machine, id) else { return nil }
                return { waiter.resume(returning: ()) }
            })
    }

    // MARK: - Report

    private func makeReport() -> RunReport {
        var report = state.withLock { RunReport(of: $0) }
        report.identity = identity
        return report
    }
}
