/// The transitions of shared limits and pausing that touch other parts of the run, each given
/// the parts it touches (as ``GraphTopology`` is given the nodes it wires). The limits' own
/// locks are never taken here: what a limit must do is an effect, carried out once the run's
/// lock is released (``GraphRunStorage/performPermitWork(_:)``).
extension GraphAdmissions {
    /// `node` names `limits` and its dependencies have ended (it is `admitting`): it asks for
    /// its first place — unless the run is paused, which asks on resume.
    mutating func begin(_ node: Int, limits: [TaskLimit], rank: UInt8, effects: inout GraphEffects) {
        if let request = begin(Int32(node), limits: limits, rank: rank) { effects.requestPermit(request) }
    }

    /// Places granted to this run's tasks. A task that now holds all its places is ready, ahead
    /// of those that hold none; one that holds some asks for the next. Returns the places nobody
    /// here wants — the task ended, or the run was paused, since it asked — to give back.
    mutating func admit(
        _ grants: [(limit: TaskLimit, node: Int32, ticket: UInt64)], isRunning: Bool,
        table: inout GraphNodeTable, readyQueue: inout ReadyQueue, effects: inout GraphEffects
    ) -> [TaskLimit] {
        var unwanted: [TaskLimit] = []
        for (limit, node, ticket) in grants {
            guard isRunning, table.nodes[Int(node)].phase == .admitting else {
                unwanted.append(limit)
                continue
            }
            switch grant(node, ticket: ticket) {
            case .giveBack: unwanted.append(limit)
            case .next(let request): effects.requestPermit(request)
            case .admitted:
                table.nodes[Int(node)].phase = .ready
                readyQueue.append(node, priority: ReadyQueue.frontPriority)
            }
        }
        return unwanted
    }

    /// `node` has ended: its waiting request is withdrawn and its places given back — or,
    /// while a body it abandoned is still out, kept until that body returns.
    mutating func ended(_ node: Int, effects: inout GraphEffects) {
        let (withdraw, giveBack) = end(Int32(node))
        effects.cancelPermitRequest(withdraw)
        effects.releasePermits(giveBack)
    }

    /// A body of `node` in a task of its own begins, if its attempt `number` is still open.
    mutating func bodyBegins(_ node: Int, number: Int, attempts: AttemptsInTasks, table: GraphNodeTable) -> Bool {
        guard attempts.isOpen(node, number: number) else { return false }
        if table.nodes[node].flags.contains(.needsAdmission) { bodyBegins(Int32(node)) }
        return true
    }

    /// That body returned with `result`: it settles its attempt unless something settled it
    /// first (returns the worker waiting for it); a task that ended meanwhile gives its places
    /// back now, and a retry waiting for the body goes on.
    mutating func bodyReturned(
        _ node: Int, number: Int, with result: AttemptInTask.Result, attempts: inout AttemptsInTasks,
        table: GraphNodeTable, effects: inout GraphEffects
    ) -> WaiterSet<Void>.Waiter? {
        let worker = attempts.settle(node, number: number, with: result)
        if table.nodes[node].flags.contains(.needsAdmission) {
            let (giveBack, noneOut) = bodyReturned(Int32(node))
            effects.releasePermits(giveBack)
            if noneOut { effects.resume(takeRetryWaiters()) }
        }
        return worker
    }

    // MARK: - Pausing

    /// No task starts until ``resume(isRunning:table:workers:effects:)`` (the workers' start
    /// limit is 0); tasks not yet started give their places back and withdraw their requests.
    mutating func pause(
        isRunning: Bool, table: inout GraphNodeTable, workers: inout GraphWorkers, effects: inout GraphEffects
    ) {
        guard isRunning, !isPaused else { return }
        workers.pauseStarting()
        let unstarted = records.keys.filter { table.nodes[Int($0)].phase.hasNotStarted }
        let (withdraw, giveBack) = pause(unstarted: unstarted)
        for node in unstarted { table.nodes[Int(node)].phase = .admitting }
        for request in withdraw { effects.cancelPermitRequest(request) }
        effects.releasePermits(giveBack)
    }

    /// Tasks start again; those whose places a pause gave back ask again, by priority and then
    /// in the order they were queued, and attempt loops waiting to begin go on.
    mutating func resume(
        isRunning: Bool, table: GraphNodeTable, workers: inout GraphWorkers, effects: inout GraphEffects
    ) {
        guard isRunning, isPaused else { return }
        workers.resumeStarting()
        let (waiters, withdrawn) = resume()
        effects.resume(waiters)
        let order = withdrawn.sorted { left, right in
            let (l, r) = (table.nodes[Int(left)], table.nodes[Int(right)])
            return (l.priorityRank, r.queuedAt, right) > (r.priorityRank, l.queuedAt, left)
        }
        for node in order { effects.requestPermit(requestAgain(node)) }
    }

    /// The run stopped: a pause ends with it, and attempt loops waiting to begin learn so.
    mutating func stop(workers: inout GraphWorkers, effects: inout GraphEffects) {
        stopPausing()
        workers.resumeStarting()
        effects.resume(takeRetryWaiters())
    }

    // MARK: - Attempt loops waiting to begin

    /// What ``GraphStateMachine/retryStarting(_:attempt:now:)`` says.
    enum RetryStart {
        case start
        /// The run stopped, or the task was removed: no attempt follows.
        case refused
        /// Paused, or an earlier body of the task still holds its places: wait
        /// (``parkRetry(_:mayStart:_:)``) and ask again.
        case wait
    }

    func mustWaitToRetry(_ node: Int) -> Bool { isPaused || hasBodyOut(Int32(node)) }

    /// Parks an attempt loop of `node` until something may let it begin; resumes it at once if
    /// that is so already, or if no attempt can follow (`stillRunning` false).
    mutating func parkRetry(
        _ node: Int, stillRunning: Bool, _ waiter: WaiterSet<Void>.Waiter
    ) -> SuspensionDecision<Void, Void> {
        guard stillRunning, mustWaitToRetry(node) else { return .resume((), ()) }
        parkRetry(waiter)
        return .wait(())
    }
}
