/// Removing a task from a run (``GraphRun/remove(_:)``): a transition of
/// ``GraphStateMachine``, given the machine, kept apart so the machine's own files stay small.
enum GraphRemoval {
    /// Removes a task that has not ended; `nil` if no task is called `id`.
    ///
    /// - A task that has not won the right to start, or waits between attempts, ends as
    ///   cancelled here and never runs again (`prevented`); a task waiting between attempts
    ///   gives its slot back now, not when its worker wakes from the backoff (`complete`).
    /// - An attempt in a task of its own that has not settled is settled as cancelled and its
    ///   body cancelled (`abandoned`); its worker records the end. One that settled with a
    ///   failure its worker has not recorded yet, with attempts left, ends here as cancelled:
    ///   the next attempt is prevented. One that settled otherwise has ended (`alreadyEnded`).
    /// - A body running on a worker is cancelled — its worker's task is — and the task ends
    ///   cancelled and removed when that body returns, whatever it returns; no attempt follows
    ///   it (`stillRunning`; the worker retires after it, see ``WorkerRegistry``) — unless it runs
    ///   under a deadline (a timeout): that one is let go at once, and ends cancelled now
    ///   (`abandoned`, ``GraphDeadlines``).
    ///
    /// A task the removal ends, now or when its body returns, is marked removed: excused.
    static func remove(
        _ id: String, now: Int64, in machine: inout GraphStateMachine, effects: inout GraphEffects
    ) -> TaskRemoval? {
        guard let index = machine.topology.position(of: id).map(Int.init), !machine.topology.definitions[index].isHidden
        else {
            return nil
        }
        switch machine.table.nodes[index].phase {
        case .succeeded, .failed, .timedOut, .skipped, .cancelled:
            return .alreadyEnded
        case .running:
            if GraphDeadlines.holds(index, in: machine) {
                GraphDeadlines.abandon(
                    index, outcome: .cancelled, removed: true, now: now, in: &machine, effects: &effects)
                machine.wakeDriverIfNeeded(&effects)
                machine.finishIfDone(now: now, effects: &effects)
                return .abandoned
            } else if let attempt = machine.attempts.current(index) {
                if machine.abandonAttempt(of: index, effects: &effects) {
                    // Settled as cancelled: its worker ends it so.
                    machine.table.markRemoved(index)
                    return .abandoned
                }
                guard mayRetry(index, after: attempt.result, in: machine) else { return .alreadyEnded }
            } else if !machine.table.nodes[index].flags.contains(.backingOff) {
                if let worker = machine.table.markRemovedWhileRunning(index),
                    let task = machine.workers.registry.pin(worker)
                {
                    effects.cancelWorker(task, id: worker)
                }
                return .stillRunning
            } else {
                machine.workers.running -= 1
            }
        case .waiting, .ready, .admitting:
            break
        }
        machine.table.markRemoved(index)
        machine.end(index, outcome: .cancelled, now: now, effects: &effects)
        machine.wakeDriverIfNeeded(&effects)
        machine.finishIfDone(now: now, effects: &effects)
        return .prevented
    }

    /// Whether a task whose attempt settled with `result` will try again: it failed or timed
    /// out, and attempts are left.
    private static func mayRetry(_ node: Int, after result: AttemptInTask.Result?, in machine: GraphStateMachine)
        -> Bool
    {
        switch result {
        case .failure, .timedOut:
            guard let spec = machine.topology.specs[node] else { return false }
            return Int(machine.table.attempts(of: node)) < spec._withUnsafeGuaranteedRef { $0.retry.maxAttempts }
        case .success, .cancelled, nil:
            return false
        }
    }
}
