extension DeadlineTimer {
    /// Runs `work` in a task of its own and returns its result — or `onDeadline()` if
    /// `deadline` (an offset on ``clock``) passes first, or `onCancel()` if the calling task
    /// is cancelled first. Whichever comes first wins; the work is then cancelled and not
    /// waited for, so work that ignores cancellation cannot hold the caller past its deadline.
    ///
    /// ```swift
    /// let answer = await timer.race(
    ///     { await self.waitUntilReady(name) },
    ///     until: timer.clock.now + timeout,
    ///     onDeadline: { .timedOut(after: timeout) },
    ///     onCancel: { .failed(.cancelled()) }
    /// )
    /// ```
    ///
    /// With `onCancel` `nil`, cancelling the caller changes nothing: the race waits for the
    /// work or the deadline (a step that must finish what it started, say).
    ///
    /// - Complexity: one task for the work, one deadline on this timer, one `OnceCell`.
    package func race<Value: Sendable>(
        _ work: @escaping @Sendable () async -> Value,
        until deadline: Duration,
        onDeadline: @escaping @Sendable () -> Value,
        onCancel: (@Sendable () -> Value)? = nil
    ) async -> Value {
        let outcome = OnceCell<Value>()
        let worker = Task(executorPreference: TaskPlacement.executor) { outcome.settle(await work()) }
        let token = schedule(at: deadline) { outcome.settle(onDeadline()) }
        let value: Value
        if let onCancel {
            value = await withTaskCancellationHandler {
                await outcome.waitIgnoringCancellation()
            } onCancel: {
                outcome.settle(onCancel())
            }
        } else {
            value = await outcome.waitIgnoringCancellation()
        }
        cancel(token)
        worker.cancel()
        return value
    }
}
