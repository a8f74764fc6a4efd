/// The scheduler's test hooks. They keep their waiters in a ``SchedulerProbe`` that the first
/// hook call creates, so a scheduler no test waits on carries one `nil` and nothing else.
extension PriorityScheduler {
    /// Test hook: suspends until at least `count` submissions are queued (in `priority`'s
    /// lane only, when given) — the event a test waits for before it releases running work,
    /// so queue order is never a race. Returns early if the waiting task is cancelled.
    package func queued(atLeast count: Int, in priority: Priority? = nil) async {
        let condition = SchedulerProbe.Condition(count: count, priority: priority)
        let id = state.withLock { $0.makeID() }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state -> Bool in
                    if Task.isCancelled || condition.holds(in: state.machine) { return true }
                    state.probe = state.probe ?? SchedulerProbe()
                    state.probe?.waiters.append((id, condition, continuation))
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.probe?.remove(id) }?.resume()
        }
    }

    /// Test hook: suspends until at least `count` callers are subscribed to coalesced flights.
    package func coalescedCallers(atLeast count: Int) async {
        await coalescer.subscribers(atLeast: count)
    }
}

/// The waiters of ``PriorityScheduler``'s test hooks, kept in its state under its lock, so a
/// condition is checked in the same critical section as the transition that meets it.
struct SchedulerProbe {
    struct Condition {
        var count: Int
        var priority: PriorityScheduler.Priority?

        func holds<Payload>(in machine: SchedulerStateMachine<Payload>) -> Bool {
            guard let priority else { return machine.queuedCount >= count }
            return machine.queuedCount(in: priority) >= count
        }
    }

    var waiters: [(id: UInt64, condition: Condition, continuation: CheckedContinuation<Void, Never>)] = []

    /// Removes and returns the waiters whose condition `machine` meets, to resume after unlocking.
    mutating func takeSatisfied<Payload>(by machine: SchedulerStateMachine<Payload>) -> [CheckedContinuation<
        Void, Never
    >] {
        guard !waiters.isEmpty else { return [] }
        var ready: [CheckedContinuation<Void, Never>] = []
        waiters.removeAll { waiter in
            guard waiter.condition.holds(in: machine) else { return false }
            ready.append(waiter.continuation)
            return true
        }
        return ready
    }

    mutating func remove(_ id: UInt64) -> CheckedContinuation<Void, Never>? {
        guard let index = waiters.firstIndex(where: { $0.id == id }) else { return nil }
        return waiters.remove(at: index).continuation
    }
}
