/// The scheduler's test hooks. Their waiters live in the scheduler's state, empty until a test
/// waits, so a condition is checked in the same critical section as the transition that meets it.
extension PriorityScheduler {
    /// Test hook: suspends until at least `count` submissions are queued (in `priority`'s
    /// lane only, when given) — the event a test waits for before it releases running work,
    /// so queue order is never a race. Returns early if the waiting task is cancelled.
    package func queued(atLeast count: Int, in priority: RequestPriority? = nil) async {
        await state.wait(
            untilCountOf: { $0.machine.queuedCount(inLane: priority) }, reaches: count, key: priority,
            waiters: \.probeWaiters)
    }

    /// Test hook: suspends until at least `count` callers are subscribed to coalesced flights,
    /// or the waiting task is cancelled.
    package func coalescedCallers(atLeast count: Int) async {
        await state.wait(untilCountOf: { $0.flights.callerCount }, reaches: count, waiters: \.callerWaiters)
    }
}

extension SchedulerStateMachine {
    /// What the test hooks count: the submissions queued in `priority`'s lane, or in all
    /// lanes when it is `nil`.
    func queuedCount(inLane priority: RequestPriority?) -> Int {
        guard let priority else { return queuedCount }
        return queuedCount(in: priority)
    }
}
