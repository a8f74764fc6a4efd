/// Shared limits and pausing, on the storage's side: each a transition under the run's lock,
/// and what it leaves for the limits done once that lock is released — the run's lock and a
/// limit's lock are never held together.
extension GraphRunStorage {
    /// The limits' part of a transition's effects: requests withdrawn first, then places given
    /// back, then requests made, each on its limit's own lock; grants they set off are handed
    /// over from there (``TaskLimit``), which may come back here through ``admit(_:)``.
    func performPermitWork(_ lists: GraphEffects.Lists) {
        for request in lists.cancelPermitRequests { request.limit.cancel(for: self, ticket: request.ticket) }
        for limit in lists.permitReleases { limit.release() }
        for request in lists.permitRequests {
            request.limit.request(for: self, node: request.node, ticket: request.ticket, rank: request.rank)
        }
    }

    /// Places `limit`s granted to this run's tasks; returns those it gives back at once.
    func admit(_ grants: [(limit: TaskLimit, grant: TaskLimit.Grant)]) -> [TaskLimit] {
        var effects = GraphEffects()
        let grants = grants.map { (limit: $0.limit, node: $0.grant.node, ticket: $0.grant.ticket) }
        let unwanted = transition { $0.admit(grants, effects: &effects) }
        apply(effects)
        return unwanted
    }

    // MARK: - Pausing

    func pause() {
        var effects = GraphEffects()
        transition { $0.pause(effects: &effects) }
        apply(effects)
    }

    func resume() {
        var effects = GraphEffects()
        transition { $0.resume(effects: &effects) }
        apply(effects)
    }

    var isPaused: Bool { state.withLock { $0.isPaused } }

    // MARK: - Attempts

    /// Waits until `node`'s next attempt may be asked for again: the run resumed, the body of
    /// its earlier attempt returned, or the task or the run ended. Not cancellable: a stop
    /// resumes it.
    func awaitRetry(_ node: Int) async {
        await state.suspendIgnoringCancellation { (machine: inout GraphStateMachine, waiter) in
            machine.parkRetry(node, waiter)
        }
    }

    /// A body in a task of its own begins, if its attempt is still open (see
    /// ``GraphStateMachine/bodyBegins(_:number:)``).
    func bodyBegins(_ node: Int, number: Int) -> Bool {
        state.withLock { $0.bodyBegins(node, number: number) }
    }

    /// That body returned: it settles its attempt unless something settled it first, and
    /// resumes the worker waiting for it; a task that ended meanwhile gives its places back.
    func bodyReturned(_ node: Int, number: Int, with result: AttemptInTask.Result) {
        var effects = GraphEffects()
        let worker = transition { $0.bodyReturned(node, number: number, with: result, effects: &effects) }
        worker?.resume(returning: ())
        apply(effects)
    }
}
