extension GateStorage {
    /// For ``RequestGate/parkedRequests(atLeast:)``.
    func parkedRequests(atLeast count: Int) async {
        await state.wait(untilCountOf: { $0.machine.credentials.parkedCount }, reaches: count, waiters: \.parkedWaiters)
    }

    /// For ``RequestGate/queuedAttempts(atLeast:)``.
    func queuedAttempts(atLeast count: Int) async {
        await state.wait(untilCountOf: { $0.machine.slots.queuedCount }, reaches: count, waiters: \.queuedWaiters)
    }

    /// For ``RequestGate/whenIdle()``: no attempt and no refresh holds or waits for a slot.
    func whenIdle() async throws(CancellationError) {
        let idle = await state.suspend(
            { (state: inout State, waiter: WaiterSet<Bool>.Waiter) -> SuspensionDecision<Bool, Bool> in
                if state.machine.slots.isIdle { return .resume(true, true) }
                state.idleWaiters.insert(waiter)
                return .wait(false)
            },
            cancelledNow: { _ in (false, false) },
            cancelled: { @Sendable state, id in
                guard let waiter = state.idleWaiters.remove(id) else { return nil }
                return { waiter.resume(returning: false) }
            })
        if !idle { throw CancellationError() }
    }
}
