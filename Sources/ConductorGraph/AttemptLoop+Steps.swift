/// The steps of an attempt loop, each one transition of its run (or of the run's attempts
/// part): kept beside the loop, which alone takes them.
extension AttemptLoop {
    /// Attempt `attempt` of `node` failed and another may follow after `delay`: whether it
    /// will (``GraphStateMachine/attemptFailed(_:attempt:error:delay:now:effects:)``).
    func attemptFailed(_ node: Int, attempt: Int, error: any Error, delay: Duration) -> Bool {
        let now = storage.clock.nanoseconds
        var effects = GraphEffects()
        let retries = storage.transition {
            $0.attemptFailed(node, attempt: attempt, error: error, delay: delay, now: now, effects: &effects)
        }
        storage.apply(effects)
        return retries
    }

    func retryStarting(_ node: Int, attempt: Int, now: Int64) -> GraphAdmissions.RetryStart {
        storage.transition { $0.retryStarting(node, attempt: attempt, now: now) }
    }

    func claimAttempt(_ node: Int, number: Int) -> AttemptsInTasks.Claim {
        storage.state.withLock { $0.attempts.claim(node, number: number) }
    }

    func attemptIsOpen(_ node: Int, number: Int) -> Bool {
        storage.state.withLock { $0.attempts.isOpen(node, number: number) }
    }

    func attachAttemptBody(_ body: Task<Void, Never>, of node: Int, number: Int) -> Bool {
        storage.state.withLock { $0.attempts.attach(body, of: node, number: number) }
    }

    /// Settles attempt `number` of `node` with its body's result or its timeout, unless
    /// something settled it first, and resumes the worker waiting for it.
    static func settleAttempt(_ node: Int, number: Int, with result: AttemptInTask.Result, in storage: GraphRunStorage)
    {
        let worker = storage.state.withLock { $0.attempts.settle(node, number: number, with: result) }
        worker?.resume(returning: ())
    }

    /// Waits until attempt `number` of `node` has settled, and returns how.
    func awaitAttempt(_ node: Int, number: Int) async -> AttemptInTask.Result {
        // Not cancellable: whatever cancels this worker (the run's stop) settles the attempt
        // first, under the same lock, and that resumes this wait.
        await storage.state.suspendIgnoringCancellation { (machine: inout GraphStateMachine, waiter) in
            machine.attempts.wait(node, number: number, waiter)
        }
        // Read under the lock, not handed over by the resumption (see `AwaitableSettlement`).
        return storage.state.withLock { $0.attempts.result(node, number: number) }
    }
}
