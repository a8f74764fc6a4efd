import Synchronization

/// A value that is set exactly once and can be awaited by any number of tasks.
///
/// The first `resolve` wins and returns `true`; every later one is a no-op that returns
/// `false`. This is the single point through which a unit of work ends, so a race
/// between completion, timeout and cancellation always produces one outcome.
/// Waiters are resumed after the lock is released.
///
/// A waiter is resumed with nothing and reads the value under the lock: a continuation
/// resumed before its task has suspended hands its payload over with atomics inside the
/// concurrency runtime, which ThreadSanitizer cannot see, and it then reports the payload's
/// storage as raced (it did, for a URL session's reply). Read under the lock, the hand-over
/// is one it sees.
package final class OnceCell<Value: Sendable>: Sendable {
    private struct Waiters {
        var next: UInt64 = 0
        var continuations: [UInt64: CheckedContinuation<Void, Never>] = [:]
    }

    private enum State {
        case pending(Waiters)
        case resolved(Value)
    }

    private let state = Lock<State>(.pending(Waiters()))

    package init() {}

    /// The value, if it has been set.
    package var value: Value? {
        state.withLock { state in
            if case .resolved(let value) = state { return value }
            return nil
        }
    }

    /// Sets the value if none was set yet. Returns whether this call set it.
    @discardableResult
    package func resolve(_ value: Value) -> Bool {
        let waiters: Waiters? = state.withLock { state in
            guard case .pending(let waiters) = state else { return nil }
            state = .resolved(value)
            return waiters
        }
        guard let waiters else { return false }
        for continuation in waiters.continuations.values { continuation.resume() }
        return true
    }

    /// Waits for the value. Returns `nil` if the waiting task is cancelled first; the
    /// cell itself is unaffected, so other waiters go on waiting.
    package func wait() async -> Value? {
        if let value { return value }
        let id = state.withLock { state -> UInt64 in
            guard case .pending(var waiters) = state else { return .max }
            let id = waiters.next
            waiters.next += 1
            state = .pending(waiters)
            return id
        }
        if id == .max { return value }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state in
                    guard case .pending(var waiters) = state, !Task.isCancelled else { return true }
                    waiters.continuations[id] = continuation
                    state = .pending(waiters)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let continuation = state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard case .pending(var waiters) = state else { return nil }
                let continuation = waiters.continuations.removeValue(forKey: id)
                state = .pending(waiters)
                return continuation
            }
            continuation?.resume()
        }
        // Resolved, or cancelled (`nil` unless the value came first).
        return value
    }

    /// Waits for the value, ignoring cancellation of the waiting task.
    package func waitIgnoringCancellation() async -> Value {
        if let value { return value }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = state.withLock { state in
                guard case .pending(var waiters) = state else { return true }
                let id = waiters.next
                waiters.next += 1
                waiters.continuations[id] = continuation
                state = .pending(waiters)
                return false
            }
            if resumeNow { continuation.resume() }
        }
        // Only `resolve` resumes a waiter that is not cancellable.
        return value!
    }
}
