/// A ``Settlement`` that tasks can await, kept in an owner's locked state: the outcome, and
/// the tasks suspended until it is decided.
///
/// The owner settles it under its lock and resumes the returned waiters once the lock is
/// released; tasks wait with ``Lock/wait(for:)`` (or ``Lock/waitIgnoringCancellation(for:)``),
/// which register through ``Lock/suspend(_:cancelledNow:perform:cancelled:)``. ``OnceCell``
/// is one of these under a lock of its own, for an owner with no state to keep it in.
///
/// ```swift
/// struct State { var launch = AwaitableSettlement<Storage>() }
/// let state = Lock(State())
///
/// // A task that needs the launch:
/// let storage = await state.wait(for: \.launch)        // nil if the task is cancelled first
///
/// // Whoever starts it:
/// let waiters = state.withLock { $0.launch.settle(storage) } ?? []
/// for waiter in waiters { waiter.resume(returning: ()) }
/// ```
///
/// A waiter is resumed with nothing and reads the outcome under the lock: a continuation
/// resumed before its task has suspended hands its payload over with atomics inside the
/// concurrency runtime, which ThreadSanitizer cannot see, and it then reports the payload's
/// storage as raced (it did, for a URL session's reply). Read under the lock, the hand-over
/// is one it sees.
@usableFromInline package struct AwaitableSettlement<Outcome: Sendable>: Sendable {
    @usableFromInline var settlement = Settlement<Outcome>()
    /// Emptied when it is settled: nobody waits on a settled outcome.
    @usableFromInline var waiters = WaiterSet<Void>()

    @inlinable package init() {}

    @inlinable package var outcome: Outcome? { settlement.outcome }
    @inlinable package var isSettled: Bool { settlement.isSettled }

    /// Settles with `outcome` if nothing did yet, and returns the waiters to resume once the
    /// lock is released; `nil` when it was settled already (nothing changes).
    @inlinable package mutating func settle(_ outcome: Outcome) -> [WaiterSet<Void>.Waiter]? {
        guard settlement.settle(outcome) else { return nil }
        return waiters.removeAll()
    }

    /// Keeps `waiter` until the outcome is decided, or answers at once when it is.
    @inlinable package mutating func register(_ waiter: WaiterSet<Void>.Waiter) -> SuspensionDecision<Void, Void> {
        guard !settlement.isSettled else { return .resume((), ()) }
        waiters.insert(waiter)
        return .wait(())
    }

    /// Takes out waiter `id` (its task was cancelled); `nil` when it is not here.
    @inlinable package mutating func remove(_ id: UInt64) -> WaiterSet<Void>.Waiter? {
        waiters.remove(id)
    }
}

extension Lock {
    /// Waits until the settlement at `settlement` is settled and returns its outcome; `nil`
    /// when the calling task is cancelled first (the settlement is unaffected).
    @inlinable package borrowing func wait<Outcome>(
        for settlement: any WritableKeyPath<Value, AwaitableSettlement<Outcome>> & Sendable
    ) async -> Outcome? {
        if let outcome = withLock({ $0[keyPath: settlement].outcome }) { return outcome }
        await suspend(
            { (value: inout Value, waiter: WaiterSet<Void>.Waiter) in value[keyPath: settlement].register(waiter) },
            cancelledNow: { _ in ((), ()) },
            cancelled: { @Sendable value, id in
                guard let waiter = value[keyPath: settlement].remove(id) else { return nil }
                return { waiter.resume(returning: ()) }
            })
        // Settled, or cancelled (`nil` unless the outcome came first).
        return withLock { $0[keyPath: settlement].outcome }
    }

    /// Waits until the settlement at `settlement` is settled, whatever happens to the
    /// calling task, and returns its outcome.
    @inlinable package borrowing func waitIgnoringCancellation<Outcome>(
        for settlement: any WritableKeyPath<Value, AwaitableSettlement<Outcome>> & Sendable
    ) async -> Outcome {
        while true {
            if let outcome = withLock({ $0[keyPath: settlement].outcome }) { return outcome }
            // Only a settle resumes a waiter that is not cancellable: the loop then returns.
            await suspendIgnoringCancellation { (value: inout Value, waiter: WaiterSet<Void>.Waiter) in
                value[keyPath: settlement].register(waiter)
            }
        }
    }
}
