/// Shared limits and pausing: the transitions that cross ``GraphAdmissions`` and the rest of the
/// run. The limits' own locks are never taken here: what a limit must do is an effect, carried
/// out once the run's lock is released (``GraphRunStorage/perform``).
extension GraphStateMachine {
    // MARK: - Places in shared limits

    /// Priority of a task that holds all its places in the ready queue: ahead of every task of
    /// its run that holds none, so it keeps the places no longer than it must.
    static let admittedPriority: UInt8 = .max

    /// `index` names limits and its dependencies have ended (it is `admitting`): it asks for
    /// its first place — unless the run is paused, which asks on resume.
    mutating func beginAdmission(_ index: Int, effects: inout GraphEffects) {
        let limits = topology.specs[index]!._withUnsafeGuaranteedRef { $0.limits }
        let rank = table.nodes[index].priorityRank
        if let request = admissions.begin(Int32(index), limits: limits, rank: rank) {
            effects.requestPermit(request)
        }
    }

    /// Places granted to this run's tasks by `limit`s. A task that now holds all its places is
    /// ready, ahead of the tasks that hold none; one that holds some asks for the next. Returns
    /// the places nobody here wants any more — the task ended, or the run was paused, since it
    /// asked — for the caller to give back.
    mutating func admit(
        _ grants: [(limit: TaskLimit, node: Int32, ticket: UInt64)], effects: inout GraphEffects
    ) -> [TaskLimit] {
        var unwanted: [TaskLimit] = []
        for (limit, node, ticket) in grants {
            guard isRunning, table.nodes[Int(node)].phase == .admitting else {
                unwanted.append(limit)
                continue
            }
            switch admissions.grant(node, ticket: ticket) {
            case .giveBack:
                unwanted.append(limit)
            case .next(let request):
                effects.requestPermit(request)
            case .admitted:
                table.nodes[Int(node)].phase = .ready
                readyQueue.append(node, priority: Self.admittedPriority)
            }
        }
        wakeDriverIfNeeded(&effects)
        return unwanted
    }

    /// `index` has ended: its waiting request is withdrawn and its places given back — or,
    /// while a body it abandoned is still out, kept until that body returns.
    mutating func admissionEnded(_ index: Int, effects: inout GraphEffects) {
        let (withdraw, giveBack) = admissions.end(Int32(index))
        effects.cancelPermitRequest(withdraw)
        effects.releasePermits(giveBack)
    }

    /// A body of `node` in a task of its own begins, if its attempt `number` is still open.
    mutating func bodyBegins(_ node: Int, number: Int) -> Bool {
        guard attempts.isOpen(node, number: number) else { return false }
        if table.nodes[node].flags.contains(.needsAdmission) { admissions.bodyBegins(Int32(node)) }
        return true
    }

    /// That body returned with `result`: it settles its attempt unless something settled it
    /// first (returns the worker waiting for it), and a task that ended meanwhile gives its
    /// places back now.
    mutating func bodyReturned(
        _ node: Int, number: Int, with result: AttemptInTask.Result, effects: inout GraphEffects
    ) -> WaiterSet<Void>.Waiter? {
        let worker = attempts.settle(node, number: number, with: result)
        if table.nodes[node].flags.contains(.needsAdmission) {
            let (giveBack, noneOut) = admissions.bodyReturned(Int32(node))
            effects.releasePermits(giveBack)
            if noneOut, admissions.hasRetryWaiters { effects.resume(admissions.takeRetryWaiters()) }
        }
        return worker
    }

    // MARK: - Pausing

    /// No task starts until ``resume(effects:)`` (``GraphWorkers/startLimit`` is 0); tasks not
    /// yet started give their limits' places back and withdraw their requests.
    mutating func pause(effects: inout GraphEffects) {
        guard isRunning, !admissions.isPaused else { return }
        workers.pauseStarting()
        let unstarted = admissions.records.keys.filter { table.nodes[Int($0)].phase.hasNotStarted }
        let (withdraw, giveBack) = admissions.pause(unstarted: unstarted)
        for node in unstarted { table.nodes[Int(node)].phase = .admitting }
        for request in withdraw { effects.cancelPermitRequest(request) }
        effects.releasePermits(giveBack)
    }

    /// Tasks start again, highest priority first; those whose places a pause gave back ask for
    /// them again (by priority, then in the order they were queued), and attempt loops waiting
    /// to begin go on.
    mutating func resume(effects: inout GraphEffects) {
        guard isRunning, admissions.isPaused else { return }
        workers.resumeStarting()
        let (waiters, withdrawn) = admissions.resume()
        effects.resume(waiters)
        let order = withdrawn.sorted { left, right in
            let (l, r) = (table.nodes[Int(left)], table.nodes[Int(right)])
            return (l.priorityRank, r.queuedAt, right) > (r.priorityRank, l.queuedAt, left)
        }
        for node in order { effects.requestPermit(admissions.requestAgain(node)) }
        wakeDriverIfNeeded(&effects)
    }

    var isPaused: Bool { admissions.isPaused }

    /// The run stopped: a pause ends with it, and attempt loops waiting to begin learn so.
    mutating func stopPausing(_ effects: inout GraphEffects) {
        admissions.stopPausing()
        workers.resumeStarting()
        if admissions.hasRetryWaiters { effects.resume(admissions.takeRetryWaiters()) }
    }

    // MARK: - Attempt loops waiting to begin

    /// What ``retryStarting(_:attempt:now:)`` says.
    enum RetryStart {
        case start
        /// The run stopped, or the task was removed: no attempt follows.
        case refused
        /// Paused, or an earlier body of the task still holds its places: wait
        /// (``parkRetry(_:_:)``) and ask again.
        case wait
    }

    func mustWaitToRetry(_ node: Int) -> Bool {
        admissions.isPaused || admissions.hasBodyOut(Int32(node))
    }

    /// Parks an attempt loop of `node` until something may let it begin; resumes it at once if
    /// that is so already.
    mutating func parkRetry(_ node: Int, _ waiter: WaiterSet<Void>.Waiter) -> SuspensionDecision<Void, Void> {
        guard isRunning, table.nodes[node].phase == .running, mustWaitToRetry(node) else { return .resume((), ()) }
        admissions.parkRetry(waiter)
        return .wait(())
    }
}
