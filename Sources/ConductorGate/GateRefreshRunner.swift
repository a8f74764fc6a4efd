/// Runs a gate's refreshes: each in a task of its own, so that no waiting request owns it (a
/// cancelled waiter leaves, the refresh goes on for the others), through the storage's
/// operations.
///
/// The gate is already refreshing when a refresh starts (the transition that decided it said
/// so), so no request is authorized with the old credential any more. The refresh still takes
/// the `unique` slot: it waits for the attempts already authorized with the old credential to
/// come back from the wire, so the server never sees the old credential after it issued the
/// new one. No parked request holds a slot, so this cannot deadlock. The deadline counts from
/// the moment the refresh has the slot.
struct GateRefreshRunner: Sendable {
    typealias Result = GateStorage.Machine.RefreshResult

    /// The user's refresh, traced when the gate has a tracer.
    let refresher: @Sendable (ErasedCredential?) async throws -> ErasedCredential
    /// The running refresh's deadline: a timer of its own, so it sleeps apart from requests'.
    let timer: DeadlineTimer
    let timeout: Duration

    /// Starts refresh `flight`, replacing `old`, in a task of its own.
    func start(_ flight: GateRefreshFlight, replacing old: ErasedCredential?, in storage: GateStorage) {
        let task = Task(executorPreference: TaskPlacement.executor) {
            await run(flight, replacing: old, in: storage)
        }
        // A sign-in, sign-out or shutdown replaced the refresh before its task was recorded.
        if !storage.recordRefreshTask(flight, task) { task.cancel() }
    }

    private func run(_ flight: GateRefreshFlight, replacing old: ErasedCredential?, in storage: GateStorage) async {
        switch await storage.acquireSlot(for: .refresh, judges: false) {
        case .started:
            let (refresher, timeout) = (self.refresher, self.timeout)
            let result: Result = await timer.race(
                {
                    do { return .succeeded(try await refresher(old)) } catch {
                        return .failed(.refreshFailed(RefreshError(error: error)))
                    }
                },
                until: timer.clock.now + timeout,
                onDeadline: { .failed(.refreshTimedOut(after: timeout)) },
                // Only a sign-in, sign-out or shutdown cancels the task: each replaced the refresh.
                onCancel: { .cancelled }
            )
            storage.refreshEnded(flight, result, releasingSlot: true)
        case .cancelled, .shutDown:
            // Cancelled or shut down while waiting for the slot: whatever did it has already
            // replaced this refresh.
            storage.refreshEnded(flight, .cancelled, releasingSlot: false)
        }
    }
}
