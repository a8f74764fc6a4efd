public import Synchronization

/// A value handed from the task that made it to the tasks a continuation resumes, in a way
/// ThreadSanitizer sees: a releasing store when it is made, an acquiring load when it is read.
///
/// NB: a continuation resumed before its task has suspended hands its payload over with
/// atomics inside the concurrency runtime, which ThreadSanitizer cannot see; it then reports
/// the payload's storage (a response's bytes, say) as raced. This edge is one it sees, without
/// a lock.
///
/// ```swift
/// let reply = Handoff(result)
/// for waiter in waiters { waiter.resume(returning: reply) }
/// // In a resumed task:
/// let result = reply.value
/// ```
@usableFromInline package final class Handoff<Value: Sendable>: Sendable {
    @usableFromInline let stored: Value
    @usableFromInline let published = Atomic<Bool>(false)

    @inlinable package init(_ value: Value) {
        stored = value
        published.store(true, ordering: .releasing)
    }

    @inlinable package var value: Value {
        _ = published.load(ordering: .acquiring)
        return stored
    }
}
