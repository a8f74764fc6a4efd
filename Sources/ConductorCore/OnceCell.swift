/// An ``AwaitableSettlement`` under a lock of its own: a value set exactly once and awaited
/// by any number of tasks, for an owner that has no locked state to keep it in.
///
/// The first `settle` wins and returns `true`; every later one is a no-op that returns
/// `false`. This is the single point through which a unit of work ends, so a race
/// between completion, timeout and cancellation always produces one outcome.
/// Waiters are resumed after the lock is released, and read the value under it (see
/// ``AwaitableSettlement`` for why).
@usableFromInline package final class OnceCell<Value: Sendable>: Sendable {
    @usableFromInline let state = Lock(AwaitableSettlement<Value>())

    @inlinable package init() {}

    /// The value, if it has been set.
    @inlinable package var value: Value? {
        state.withLock { $0.outcome }
    }

    /// Sets the value if none was set yet. Returns whether this call set it.
    @discardableResult
    @inlinable package func settle(_ value: Value) -> Bool {
        guard let waiters = state.withLock({ $0.settle(value) }) else { return false }
        for waiter in waiters { waiter.resume(returning: ()) }
        return true
    }

    /// Waits for the value. Returns `nil` if the waiting task is cancelled first; the
    /// cell itself is unaffected, so other waiters go on waiting.
    @inlinable package func wait() async -> Value? {
        await state.wait(for: \.self)
    }

    /// Waits for the value, ignoring cancellation of the waiting task.
    @inlinable package func waitIgnoringCancellation() async -> Value {
        await state.waitIgnoringCancellation(for: \.self)
    }
}
