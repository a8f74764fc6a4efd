/// The steps of an attempt loop that shared limits and pausing add, each one transition of the
/// run (its lock, then its effects once that is released).
extension AttemptLoop {
    /// Waits until `node`'s next attempt may be asked for again: the run resumed, the body of
    /// its earlier attempt returned, or the task or the run ended. Not cancellable: a stop
    /// resumes it.
    func awaitRetry() async {
        await storage.state.suspendIgnoringCancellation { (machine: inout GraphStateMachine, waiter) in
            let stillRunning = machine.isRunning && machine.table.nodes[node].phase == .running
            return machine.admissions.parkRetry(node, stillRunning: stillRunning, waiter)
        }
    }

    /// A body in a task of its own begins, if its attempt is still open.
    static func bodyBegins(_ node: Int, number: Int, in storage: GraphRunStorage) -> Bool {
        storage.state.withLock {
            $0.admissions.bodyBegins(node, number: number, attempts: $0.attempts, table: $0.table)
        }
    }

    /// That body returned: it settles its attempt unless something settled it first, and
    /// resumes the worker waiting for it; a task that ended meanwhile gives its places back.
    static func bodyReturned(
        _ node: Int, number: Int, with result: AttemptInTask.Result, in storage: GraphRunStorage
    ) {
        var effects = GraphEffects()
        let worker = storage.transition { machine in
            machine.admissions.bodyReturned(
                node, number: number, with: result, attempts: &machine.attempts, table: machine.table,
                effects: &effects)
        }
        worker?.resume(returning: ())
        storage.apply(effects)
    }
}
