/// The coalescer's test hook. Its waiters live in a ``CoalescerProbe`` that the first call
/// creates, so a coalescer no test waits on carries one `nil` and nothing else.
extension Coalescer {
    /// Test hook: suspends until at least `count` callers are subscribed to flights, or the
    /// waiting task is cancelled.
    func subscribers(atLeast count: Int) async {
        let id = state.withLock { state in
            var probe = state.probe ?? CoalescerProbe()
            defer { state.probe = probe }
            return probe.makeID()
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state -> Bool in
                    if Task.isCancelled || state.subscriberCount >= count { return true }
                    state.probe?.waiters.append((id, count, continuation))
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.probe?.remove(id) }?.resume()
        }
    }
}

/// The waiters of ``Coalescer``'s test hook, kept in its state under its lock.
struct CoalescerProbe {
    var nextID: UInt64 = 0
    var waiters: [(id: UInt64, count: Int, continuation: CheckedContinuation<Void, Never>)] = []

    mutating func makeID() -> UInt64 {
        defer { nextID += 1 }
        return nextID
    }

    mutating func takeSatisfied(subscribers: Int) -> [CheckedContinuation<Void, Never>] {
        guard !waiters.isEmpty else { return [] }
        var ready: [CheckedContinuation<Void, Never>] = []
        waiters.removeAll { waiter in
            guard subscribers >= waiter.count else { return false }
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
