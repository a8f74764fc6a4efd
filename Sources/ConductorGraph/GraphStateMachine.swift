/// The pure core of a run: which tasks are ready, running and ended, and what must happen
/// next. No locks, no clocks, no tasks: each transition takes the time as an argument and
/// returns what the storage must do once it has released its lock.
///
/// Parts embedded in one value, under the run's one lock, each keeping its facts once:
/// - ``GraphTopology``: what the nodes are and their successors; only grows.
/// - ``GraphNodeTable``: each node's changing state (phase, counts, times) and its end.
/// - ``GraphWorkers``: how many tasks run, the workers alive, the helper policy, the driver.
/// - ``GraphMilestones``: each milestone's outcome and waiters.
/// - ``AttemptsInTasks``: the attempt of each task whose body runs in a task of its own.
/// - ``GraphResultWaiters``: who waits from outside for a task's end.
/// - ``GraphJoins``: subtasks, and the parents that wait for them without a place.
/// - ``GraphAdmissions``: the places of tasks that name shared limits; whether it is paused.
///
/// This value holds what ties them together: the run's phase, the ready queue and the journal,
/// and the transitions, each of which may touch several parts.
struct GraphStateMachine {
    typealias Node = GraphNodeTable.Node

    enum RunPhase {
        case running
        case stopping(RunOutcome)
        case finished(RunOutcome)
    }

    typealias Assignment = GraphWorkers.Assignment
    typealias DriverAction = GraphWorkers.DriverAction

    // The parts, and the state that ties them together. Written only by the transitions, in
    // this file and in GraphStateMachine+Ending.swift (which is why they are not `private`).
    var topology = GraphTopology()
    var table = GraphNodeTable()
    var workers: GraphWorkers
    /// Waiting for a milestone touches nothing else: the storage calls its operations directly.
    var milestones = GraphMilestones()
    /// The worker's side of an attempt in a task of its own — claim, attach the body, settle,
    /// wait, read the result — touches nothing else: the storage calls those directly. The
    /// machine alone starts, forgets and abandons attempts.
    var attempts = AttemptsInTasks()
    var resultWaiters = GraphResultWaiters()
    var joins = GraphJoins()
    var deadlines = GraphDeadlines()
    /// Shared limits and pausing (its transitions are given the parts they touch).
    var admissions = GraphAdmissions()
    var readyQueue = ReadyQueue()
    var finishedAt: Int64 = 0
    var phase: RunPhase = .running {
        didSet {
            isRunning = if case .running = phase { true } else { false }
            isFinished = if case .finished = phase { true } else { false }
        }
    }
    /// `phase` is `.running`; `phase` is `.finished`. Asked on every transition: matching
    /// `phase` itself copies its payload (a `GraphError`) out and destroys it again.
    private(set) var isRunning = true
    private(set) var isFinished = false
    /// Started to stay open: not finished when its nodes have ended, until closed or stopped.
    var isHeldOpen: Bool
    /// The number of the last numbered addition the run holds (see
    /// ``GraphRunStorage/addLeavingWakeups(numbered:now:)``): a caller that hands over a
    /// queue another caller has handed over already learns here which part is in.
    var lastAdditionNumber: UInt64?
    /// Reused by every completion for the nodes it makes ready, so ending a task allocates nothing.
    var readyScratch: [Int32] = []
    /// The run's events, in the order of the transitions that made them: kept under the
    /// run's lock with the rest of its state, so a transition appends a record where it
    /// happens and takes no second lock; readers read it under the same lock
    /// (``GraphRunStorage/batch(from:limit:isolation:)``) and are woken once per transition.
    var journal = JournalBuffer<GraphEventRecord>(keepingNewest: nil)
    /// The rare events whole, by position (`.other(i)` names `rareEvents[i]`).
    private(set) var rareEvents: [GraphEvent] = []

    init(concurrencyLimit: Int, parallelWorkers: Int, staysOpen: Bool = false) {
        workers = GraphWorkers(concurrencyLimit: concurrencyLimit, parallelWorkers: parallelWorkers)
        isHeldOpen = staysOpen
    }

    /// A run held open finishes once what it holds has ended, from now on.
    mutating func close(now: Int64, effects: inout GraphEffects) {
        isHeldOpen = false
        finishIfDone(now: now, effects: &effects)
    }

    var outcome: RunOutcome? {
        if case .finished(let outcome) = phase { return outcome }
        return nil
    }

    var definitions: [NodeDefinition] { topology.definitions }

    mutating func record(_ event: GraphEvent) {
        journal.append(.other(Int32(truncatingIfNeeded: rareEvents.count)))
        rareEvents.append(event)
    }

    // MARK: - Building

    /// Adds validated definitions, which may depend on nodes already present and on each
    /// other in any order (``GraphInsertion``). Nodes whose dependencies have all ended become
    /// ready.
    mutating func insert(
        _ newDefinitions: [NodeDefinition], compiled: CompiledGraph? = nil, now: Int64, effects: inout GraphEffects
    ) {
        GraphInsertion.insert(newDefinitions, compiled: compiled, into: &self, now: now, effects: &effects)
    }

    // MARK: - Driver

    /// What the driver (the task that owns the task group) should do next: see
    /// ``GraphWorkers`` for where its workers run.
    mutating func nextForDriver(now: Int64, effects: inout GraphEffects) -> DriverAction {
        if workers.driverMustCancelAll {
            workers.driverMustCancelAll = false
            return .cancelAll
        }
        if isFinished { return .finish }
        if let assignment = takeNext(now: now, worker: -1, effects: &effects) {
            // A fresh worker: its id is kept in the node, where it reads it when it registers.
            let inline = workers.startWorker()
            table.nodes[assignment.node].remaining = workers.registry.open(isHelper: !inline)
            return .spawn(assignment, inline: inline)
        }
        workers.noTaskToStart()
        return .wait
    }

    /// A worker registers its task before its first body (`node`'s), for removals to cancel
    /// (``WorkerRegistry``); returns its id and whether that body may begin (not removed yet, and
    /// for a helper, after its hop, the run not stopped).
    mutating func registerWorker(running node: Int, task: WorkerTask?, helper: Bool) -> (Int32, starts: Bool) {
        workers.registry.register(table.nodes[node].remaining, task: task)
        let starts =
            table.nodes[node].flags.isDisjoint(with: [.removedWhileRunning, .abandonedOnWorker])
            && (!helper || isRunning)
        return (table.nodes[node].remaining, starts)
    }

    /// Parks the driver, or lets it go on at once if there is already work for it.
    mutating func parkDriver(_ driver: WaiterSet<Void>.Waiter) -> SuspensionDecision<Void, Void> {
        let hasWork = hasDriverWork
        return workers.parkDriver(driver, hasWork: hasWork)
    }

    private var hasDriverWork: Bool {
        if workers.driverMustCancelAll || isFinished { return true }
        // `helperWanted` only ever comes with a task in the ready queue: the driver starts
        // it in the helper.
        if isRunning { return !readyQueue.isEmpty && workers.hasSlot }
        return false
    }

    mutating func wakeDriverIfNeeded(_ effects: inout GraphEffects) {
        guard workers.driverIsParked, hasDriverWork else { return }
        effects.resumeDriver = workers.unparkDriver()
    }

    // MARK: - Workers

    /// Records the end of `node` and hands the worker its next task, if any (see
    /// ``GraphWorkers`` for when it gets none).
    ///
    /// `startedAt` is when the worker called the body (`Node.never` if it never did), and
    /// `now` when the body returned: both read outside the lock, so the report shows the
    /// body's own run time, not the wait for this transition. `takeNext` stamped the start
    /// when the task was handed out; that stays for a task that ended meanwhile (removed, or
    /// the run stopped), whose end was recorded then. `helper` says whether the worker runs on
    /// a thread of its own (the driver started it with `inline: false`).
    @inline(__always)
    mutating func complete(
        _ node: Int,
        outcome: TaskOutcome,
        startedAt: Int64,
        now: Int64,
        helper: Bool = false,
        effects: inout GraphEffects
    ) -> Assignment? {
        let (hasEnded, flags, worker) = table.nodes.withUnsafeBufferPointer {
            ($0[node].phase.hasEnded, $0[node].flags, $0[node].remaining)
        }
        // Ended meanwhile (removed, or the run stopped) or removed while its body ran: out of
        // line, so a body's plain end tests one condition for them all.
        guard !hasEnded, !flags.contains(.removedWhileRunning) else {
            return completeEnded(
                node, hasEnded: hasEnded, flags: flags, outcome: outcome, startedAt: startedAt, now: now,
                helper: helper, effects: &effects)
        }
        workers.running -= 1
        if !attempts.isEmpty { attempts.forget(node) }
        if case .succeeded = outcome {
            endSucceeded(node, startedAt: startedAt, now: now, effects: &effects)
        } else {
            if startedAt != Node.never { table.nodes[node].startedAt = startedAt }
            end(node, outcome: outcome, now: now, effects: &effects)
        }
        return handOut(after: startedAt, now: now, helper: helper, worker: worker, retiring: false, effects: &effects)
    }

    /// ``complete(_:outcome:startedAt:now:helper:effects:)`` for a worker: when it gets no next
    /// task, its registry entry is closed in the same transition (``GraphWorkers/WorkerNext``).
    @inline(__always)
    mutating func completeOnWorker(
        _ node: Int, outcome: TaskOutcome, startedAt: Int64, now: Int64, helper: Bool, effects: inout GraphEffects
    ) -> GraphWorkers.WorkerNext {
        // Running (or ended while running): the node keeps its worker's id.
        let worker = table.nodes[node].remaining
        if let next = complete(
            node, outcome: outcome, startedAt: startedAt, now: now, helper: helper, effects: &effects)
        {
            return .run(next)
        }
        return workers.registry.close(worker) ? .endAfterUnpin(worker) : .end
    }

    /// ``complete(_:outcome:startedAt:now:helper:effects:)`` for a task that ended before its
    /// worker recorded it, or was removed while its body ran: that one ends cancelled whatever
    /// the body did, and its worker retires.
    @inline(never)
    private mutating func completeEnded(
        _ node: Int, hasEnded: Bool, flags: GraphNodeTable.Flags, outcome: TaskOutcome, startedAt: Int64, now: Int64,
        helper: Bool, effects: inout GraphEffects
    ) -> Assignment? {
        // Let go by its deadline, a removal or a stop, which gave its place and count back.
        if flags.contains(.abandonedOnWorker) { return nil }
        let removed = flags.contains(.removedWhileRunning)
        let worker = table.nodes[node].remaining
        // A task removed while it backed off gave its slot back at the removal (`remove`): only
        // a removal ends a task between its attempts, before its worker wakes to record it.
        if !hasEnded || !flags.contains(.backingOff) { workers.running -= 1 }
        if !attempts.isEmpty { attempts.forget(node) }
        if !hasEnded {
            if startedAt != Node.never { table.nodes[node].startedAt = startedAt }
            end(node, outcome: removed ? .cancelled : outcome, now: now, effects: &effects)
        }
        return handOut(after: startedAt, now: now, helper: helper, worker: worker, retiring: removed, effects: &effects)
    }

    /// The worker that ran a body to `now` gets its next task, or none (see ``GraphWorkers``).
    @inline(__always)
    private mutating func handOut(
        after startedAt: Int64, now: Int64, helper: Bool, worker: Int32, retiring: Bool, effects: inout GraphEffects
    ) -> Assignment? {
        let next: Assignment?
        switch retiring ? .retire : workers.bodyEnded(startedAt: startedAt, now: now, helper: helper) {
        case .takeNext:
            next = takeNext(now: now, worker: worker, effects: &effects)
        case .giveThreadBackIfTasksWait:
            if isRunning, !readyQueue.isEmpty {
                workers.giveThreadBack()
                next = nil
            } else {
                next = takeNext(now: now, worker: worker, effects: &effects)
            }
        case .retire:
            next = nil
        }
        if next == nil { workers.workerEnded(helper: helper) }
        wakeDriverIfNeeded(&effects)
        finishIfDone(now: now, effects: &effects)
        return next
    }

    /// The backoff of `node` is over: the next attempt starts only if the run is still
    /// running and the task was not removed meanwhile — the one place a retry wins the right
    /// to start, so nothing starts after a stop. It waits (``RetryStart/wait``) while the run
    /// is paused or a body of its earlier attempt still holds its limits' places. A task whose
    /// body runs in a task of its own has its attempt registered when it starts.
    mutating func retryStarting(_ node: Int, attempt: Int, now: Int64) -> GraphAdmissions.RetryStart {
        guard isRunning, table.nodes[node].phase == .running else { return .refused }
        if admissions.mustWaitToRetry(node) { return .wait }
        table.nodes[node].flags.remove(.backingOff)
        table.setAttempts(Int32(clamping: attempt), of: node)
        journal.append(.started(node: Int32(node), attempt: Int32(clamping: attempt), at: now))
        if topology.runsInOwnTask(node) { attempts.start(node, number: Int32(clamping: attempt)) }
        return .start
    }

    /// Attempt `attempt` of `node` failed and another may follow after `delay`. Returns
    /// `false`, recording nothing, when none will: the run has stopped, or the task was
    /// removed — once the failed attempt had settled (it ended then, as cancelled), or while
    /// its body ran on a worker (it ends now, as cancelled).
    mutating func attemptFailed(
        _ node: Int, attempt: Int, error: any Error, delay: Duration, now: Int64, effects: inout GraphEffects
    ) -> Bool {
        attempts.forget(node)
        guard isRunning, table.nodes[node].phase == .running else { return false }
        if table.nodes[node].flags.contains(.removedWhileRunning) {
            table.markRemoved(node)
            end(node, outcome: .cancelled, now: now, effects: &effects)
            wakeDriverIfNeeded(&effects)
            finishIfDone(now: now, effects: &effects)
            return false
        }
        table.nodes[node].flags.insert(.backingOff)
        record(.taskRetried(topology.id(of: node), attempt: attempt, error: error, delay: delay, at: .nanoseconds(now)))
        return true
    }

    /// Hands the next ready task to `worker`, whose id the running node keeps.
    private mutating func takeNext(now: Int64, worker: Int32, effects: inout GraphEffects) -> Assignment? {
        guard isRunning, workers.hasSlot else { return nil }
        while let entry = readyQueue.popFirst() {
            let index = Int(entry)
            guard table.nodes[index].phase == .ready, let spec = topology.specs[index] else {
                // A joining parent queued for a place takes this one.
                if GraphJoins.placeFreed(for: entry, in: &self, effects: &effects), !workers.hasSlot { return nil }
                continue
            }
            // In a task of its own, or under a deadline: one test of the node's flags for both.
            let special = table.nodes.withUnsafeMutableBufferPointer { nodes in
                nodes[index].phase = .running
                nodes[index].startedAt = now
                nodes[index].remaining = worker
                return nodes[index].flags.intersection([.runsInOwnTask, .hasDeadline])
            }
            workers.running += 1
            // Without room for the ready tasks' starts and ends, room for all nodes yet to end (see GraphInsertion).
            journal.makeRoom(for: 2 * readyQueue.count + 2, planning: 3 * (table.nodes.count - table.ended) + 1)
            journal.append(.started(node: entry, attempt: 1, at: now))
            if !special.isEmpty {
                if special.contains(.runsInOwnTask) { attempts.start(index, number: 1) }
                if special.contains(.hasDeadline) {
                    GraphDeadlines.started(index, spec: spec, now: now, in: &self, effects: &effects)
                }
            }
            return Assignment(node: index, spec: spec.takeUnretainedValue())
        }
        return nil
    }

    /// Settles `node`'s attempt as cancelled, if one is in flight and unsettled.
    mutating func abandonAttempt(of node: Int, effects: inout GraphEffects) -> Bool {
        guard let (body, worker) = attempts.abandon(node) else { return false }
        effects.abandoned(body: body, worker: worker)
        return true
    }
}
