/// How nodes end, release their successors, and how the run stops and finishes.
extension GraphStateMachine {
    // MARK: - Stopping

    /// Cancels the run: pending tasks end as cancelled, running ones are told to stop.
    mutating func cancel(now: Int64, effects: inout GraphEffects) {
        stop(.cancelled, now: now, effects: &effects)
        finishIfDone(now: now, effects: &effects)
    }

    /// Removes a task that has not ended; `nil` if no task is called `id` (see ``GraphRemoval``).
    mutating func remove(_ id: String, now: Int64, effects: inout GraphEffects) -> TaskRemoval? {
        GraphRemoval.remove(id, now: now, in: &self, effects: &effects)
    }

    mutating func stop(_ outcome: RunOutcome, now: Int64, effects: inout GraphEffects) {
        guard isRunning else { return }
        phase = .stopping(outcome)
        isHeldOpen = false
        readyQueue.removeAll()
        for index in table.nodes.indices where table.nodes[index].phase.hasNotStarted {
            endQuietly(index, outcome: .cancelled, now: now, effects: &effects)
            if table.nodes[index].flags.contains(.needsAdmission) { admissions.ended(index, effects: &effects) }
        }
        admissions.stop(workers: &workers, effects: &effects)
        for node in attempts.nodes { _ = abandonAttempt(of: node, effects: &effects) }
        GraphDeadlines.stopped(now: now, in: &self, effects: &effects)
        GraphJoins.stopped(in: &self, effects: &effects)
        workers.driverMustCancelAll = true
        wakeDriverIfNeeded(&effects)
    }

    // MARK: - Ending nodes

    /// Ends a node and lets its successors go, cascading through markers and skips.
    ///
    /// The general path; ``endSucceeded(_:startedAt:now:effects:)`` is the one for a body
    /// that returned, which is most ends. Two, because that one skips the outcome's payload,
    /// the failure policy and the gathered release: ending every task here was tried, and
    /// cost the graph benchmarks a sixth (independent tasks) to a quarter (a DAG) more
    /// instructions per task (`scripts/instructions --filter graph`).
    mutating func end(_ index: Int, outcome: TaskOutcome, now: Int64, effects: inout GraphEffects) {
        endQuietly(index, outcome: outcome, now: now, effects: &effects)
        if table.nodes[index].flags.contains(.needsAdmission) { admissions.ended(index, effects: &effects) }
        // An attempt loop waiting to begin may belong to a task this ended (removed).
        effects.resume(admissions.takeRetryWaiters())
        if table.nodes[index].flags.contains(.failureIsRequired), isRunning {
            let id = topology.id(of: index)
            switch outcome {
            case .failed(let error):
                return stop(.failed(.taskFailed(id, error)), now: now, effects: &effects)
            case .timedOut(let after):
                return stop(.failed(.timedOut(id, after: after)), now: now, effects: &effects)
            case .cancelled where !table.removed.contains(Int32(index)):
                // Neither removed nor stopped: its own body threw `CancellationError`.
                return stop(.failed(.taskCancelled(id)), now: now, effects: &effects)
            default:
                break
            }
        }
        // Most tasks of a wide graph have no successors: they touch no scratch list at all.
        guard table.nodes[index].flags.contains(.hasSuccessors) else { return }
        releaseSuccessors(of: index, now: now, effects: &effects)
    }

    /// Counts `index`'s end down in its successors and moves those it makes ready on
    /// (``release(_:now:effects:)``); with `from`, the successors of its flat table from that
    /// position on, and those later additions wired to it.
    private mutating func releaseSuccessors(
        of index: Int, from position: Int? = nil, now: Int64, effects: inout GraphEffects
    ) {
        var ready = readyScratch
        readyScratch = []
        topology.releaseSuccessors(of: index, from: position, nodes: &table.nodes, to: &ready)
        if !ready.isEmpty {
            release(&ready, now: now, effects: &effects)
            // `removeAll(keepingCapacity:)` goes through a generic `replaceSubrange`.
            while !ready.isEmpty { ready.removeLast() }
        }
        readyScratch = ready
    }

    /// ``end(_:outcome:now:effects:)`` for the common case, a body that returned: no outcome
    /// to keep, no failure policy to apply.
    mutating func endSucceeded(_ index: Int, startedAt: Int64, now: Int64, effects: inout GraphEffects) {
        // The node's writes through one buffer: one uniqueness check of `nodes` for them all.
        let flags = table.nodes.withUnsafeMutableBufferPointer { nodes in
            if startedAt != Node.never { nodes[index].startedAt = startedAt }
            nodes[index].phase = .succeeded
            nodes[index].endedAt = now
            return nodes[index].flags
        }
        table.ended += 1
        if flags.contains(.isReported) { journal.append(.succeeded(node: Int32(index), at: now)) }
        // Awaited from outside, or holding limits' places: one test for both, rare.
        if !flags.isDisjoint(with: [.isAwaited, .needsAdmission]) { endedAwaitedOrAdmitted(index, flags, &effects) }
        guard flags.contains(.hasSuccessors) else { return }
        releaseSuccessorsOfSucceeded(index, now: now, effects: &effects)
    }

    /// ``releaseSuccessors(of:from:now:effects:)`` for a task that succeeded while the run goes
    /// on, a DAG's common case: one pass over its flat successor table that queues each task it
    /// makes ready on the spot, instead of gathering them in a list for
    /// ``release(_:now:effects:)`` first (a list written and read back per node). Two paths,
    /// because that list costs the per-task instruction budget a DAG is held to. At the first
    /// successor this would make ready that needs more — a marker, a task a failed dependency
    /// blocks — it hands that successor and the rest to the general path, whose cascade goes
    /// after them, so the events come in the same order either way (`GraphReleasePathTests`).
    private mutating func releaseSuccessorsOfSucceeded(_ index: Int, now: Int64, effects: inout GraphEffects) {
        guard isRunning, index + 1 < topology.firstSuccessorStart.count else {
            return releaseSuccessors(of: index, now: now, effects: &effects)
        }
        let end = Int(topology.firstSuccessorStart[index + 1])
        var position = Int(topology.firstSuccessorStart[index])
        // The edges by subscript, not through a buffer: a buffer of `firstSuccessors` held
        // while `self` is written is retained and released around the loop, once a node.
        table.nodes.withUnsafeMutableBufferPointer { nodes in
            while position < end {
                let successor = Int(topology.firstSuccessors[position].node)
                if nodes[successor].phase == .waiting {
                    if nodes[successor].remaining == 1 {
                        // A task, and one that names no limit: the same AND and compare as `isTask`.
                        guard nodes[successor].flags.intersection([.isTask, .needsAdmission]) == .isTask,
                            nodes[successor].blockedBy < 0
                        else { return }
                        nodes[successor].phase = .ready
                        nodes[successor].queuedAt = now
                        journal.append(.queued(node: Int32(successor), at: now))
                        readyQueue.append(Int32(successor), priority: nodes[successor].priorityRank)
                    }
                    nodes[successor].lastDependency = Int32(index)
                    nodes[successor].remaining -= 1
                }
                position += 1
            }
        }
        if position < end || topology.hasAddedSuccessors(index) {
            releaseSuccessors(of: index, from: position, now: now, effects: &effects)
        }
    }

    /// A succeeded task someone awaits from outside, or one that holds limits' places.
    @inline(never)
    private mutating func endedAwaitedOrAdmitted(
        _ index: Int, _ flags: GraphNodeTable.Flags, _ effects: inout GraphEffects
    ) {
        if flags.contains(.isAwaited) { resultWaiters.ended(index, effects: &effects) }
        if flags.contains(.needsAdmission) { admissions.ended(index, effects: &effects) }
    }

    /// Ends `index` and records its end, without releasing anything.
    private mutating func endQuietly(_ index: Int, outcome: TaskOutcome, now: Int64, effects: inout GraphEffects) {
        guard table.end(index, outcome, at: now) else { return }
        if table.nodes[index].flags.contains(.isAwaited) { resultWaiters.ended(index, effects: &effects) }
        let at = Duration.nanoseconds(now)
        switch outcome {
        case .succeeded: journal.append(.succeeded(node: Int32(index), at: now))
        case .cancelled: journal.append(.cancelled(node: Int32(index), at: now))
        case .failed(let error): record(.taskFailed(topology.id(of: index), error: error, at: at))
        case .timedOut: record(.taskTimedOut(topology.id(of: index), at: at))
        case .skipped(let dependency): record(.taskSkipped(topology.id(of: index), dependency: dependency, at: at))
        }
    }

    /// Moves nodes whose dependencies have all ended on: markers are reached, blocked tasks
    /// skipped, the rest queued, in the order they became ready (so equal priorities stay FIFO).
    /// Iterative, so a long chain of markers cannot overflow the stack.
    mutating func release(_ work: inout [Int32], now: Int64, effects: inout GraphEffects) {
        var cursor = 0
        while cursor < work.count {
            let next = work[cursor]
            cursor += 1
            let index = Int(next)
            // Read once and written back once: one uniqueness check of `nodes`, not one a field.
            var node = table.nodes[index]
            guard node.phase == .waiting, isRunning else { continue }
            if !node.isTask {
                reachMarker(index, now: now, effects: &effects)
            } else if node.blockedBy < 0 || node.flags.contains(.runsAnywayAfterFailure) {
                let admitting = node.flags.contains(.needsAdmission)
                node.phase = admitting ? .admitting : .ready
                node.queuedAt = now
                table.nodes[index] = node
                journal.append(.queued(node: next, at: now))
                if admitting {
                    let limits = topology.specs[index]!._withUnsafeGuaranteedRef { $0.limits }
                    admissions.begin(index, limits: limits, rank: node.priorityRank, effects: &effects)
                } else {
                    readyQueue.append(next, priority: node.priorityRank)
                }
                continue
            } else {
                let dependency = topology.id(of: Int(node.blockedBy))
                endQuietly(index, outcome: .skipped(dependency: dependency), now: now, effects: &effects)
                // A required task that cannot run fails the run, like its failure would,
                // unless a removal is what it lacks.
                if node.flags.contains(.failureIsRequired), !table.lacksOnlyRemoved(index) {
                    let error = GraphError.taskSkipped(topology.id(of: index), dependency: dependency)
                    stop(.failed(error), now: now, effects: &effects)
                    continue
                }
            }
            topology.releaseSuccessors(of: index, from: nil, nodes: &table.nodes, to: &work)
        }
    }

    /// A marker whose dependencies have all ended: its stage starts, its milestone is reached.
    private mutating func reachMarker(_ index: Int, now: Int64, effects: inout GraphEffects) {
        guard case .marker(let milestone, let startsStage) = topology.definitions[index].kind else { return }
        endQuietly(index, outcome: .succeeded, now: now, effects: &effects)
        let at = Duration.nanoseconds(now)
        if let startsStage { record(.stageStarted(startsStage, at: at)) }
        if milestone == nil, startsStage == nil { GraphJoins.markerReached(index, in: &self, effects: &effects) }
        if let milestone {
            record(.milestoneReached(milestone, at: at))
            effects.reached(milestone, at: at)
            effects.resume(milestones.reach(milestone, at: at))
        }
    }

    /// Inlined: every transition asks, and almost always the answer is no.
    @inline(__always)
    mutating func finishIfDone(now: Int64, effects: inout GraphEffects) {
        guard table.ended == table.nodes.count, !isFinished, !isHeldOpen else { return }
        finish(now: now, effects: &effects)
    }

    @inline(never)
    private mutating func finish(now: Int64, effects: inout GraphEffects) {
        let outcome: RunOutcome
        switch phase {
        case .running: outcome = .completed
        case .stopping(let reason): outcome = reason
        case .finished: return
        }
        phase = .finished(outcome)
        finishedAt = now
        record(.runFinished(outcome, at: .nanoseconds(now)))
        journal.finishLeavingReaders()
        effects.resume(milestones.missTheRest())
        effects.cancel(deadlines.removeAll())
        if workers.driverIsParked { effects.resumeDriver = workers.unparkDriver() }
    }

    // MARK: - Reading

    func id(of node: Int) -> String { topology.id(of: node) }

    func result(of id: String) -> (any Sendable)? {
        guard let index = topology.position(of: id).map(Int.init) else { return nil }
        return table.result(of: index)
    }
}
