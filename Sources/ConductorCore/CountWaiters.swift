/// Tasks suspended until some count reaches a threshold: the waiters behind every
/// "suspend until at least N …" test hook, kept in the hook owner's state under its lock.
///
/// It only keeps the list; it never resumes anything. Each mutating call that lets waiters go
/// returns their continuations, for the owner to resume once its lock is released (resuming
/// under a lock can run the resumed task's code inside it). `Key` says what a waiter counts
/// when the owner keeps several counts (sleepers for one purpose, one priority lane);
/// owners with one count use `Void`.
///
/// Most owners need only ``Lock/wait(untilCountOf:reaches:key:waiters:)`` to wait, and
/// ``takeSatisfied(by:)`` wherever the count grows:
///
/// ```swift
/// struct State {
///     var jobs: [Job] = []
///     var waiters = CountWaiters<Void>()
/// }
/// let state = Lock(State())
///
/// // The hook: returns once 3 jobs are queued, or at once when its task is cancelled.
/// await state.wait(untilCountOf: { $0.jobs.count }, reaches: 3, waiters: \.waiters)
///
/// // Wherever a job is queued:
/// let ready = state.withLock { state in
///     state.jobs.append(job)
///     return state.waiters.takeSatisfied(by: state.jobs.count)
/// }
/// for waiter in ready { waiter.resume() }
/// ```
@usableFromInline package struct CountWaiters<Key: Sendable>: Sendable {
    /// Checked in debug builds, unchecked in release builds, as ``WaiterSet/Continuation``.
    @usableFromInline package typealias Continuation = WaiterSet<Void>.Continuation

    @usableFromInline struct Waiter: Sendable {
        @usableFromInline package var id: UInt64
        @usableFromInline package var key: Key
        @usableFromInline package var threshold: Int
        @usableFromInline package var continuation: Continuation

        @inlinable init(id: UInt64, key: Key, threshold: Int, continuation: Continuation) {
            self.id = id
            self.key = key
            self.threshold = threshold
            self.continuation = continuation
        }
    }

    /// In registration order, so waiters a count satisfies together resume in that order.
    @usableFromInline var waiters: [Waiter] = []
    @usableFromInline var nextID: UInt64 = 0

    @inlinable package init() {}

    /// Whether no task waits: an owner whose count is costly to compute checks it first.
    @inlinable package var isEmpty: Bool { waiters.isEmpty }

    /// A fresh id, to take before registering so that a cancellation handler, which may run
    /// before the registration, can name the waiter. (``Lock/wait(untilCountOf:reaches:key:waiters:)``
    /// registers with ids from ``WaiterID``, which never equal these: they count down from
    /// the top.)
    @inlinable package mutating func makeID() -> UInt64 {
        defer { nextID &+= 1 }
        return UInt64.max - nextID
    }

    /// Keeps `continuation` until the count for `key` reaches `threshold`, or until it is
    /// removed by `id`. The caller has checked that the count is below `threshold` (and its
    /// task not cancelled) under the same lock.
    @inlinable package mutating func register(id: UInt64, threshold: Int, key: Key, continuation: Continuation) {
        waiters.append(Waiter(id: id, key: key, threshold: threshold, continuation: continuation))
    }

    /// Removes the waiters whose threshold the count now meets and returns their
    /// continuations, to resume once the lock is released. `count` gives the count for a
    /// waiter's key; it is called only while waiters remain.
    @inlinable package mutating func takeSatisfied(count: (Key) -> Int) -> [Continuation] {
        guard !waiters.isEmpty else { return [] }
        var ready: [Continuation] = []
        waiters.removeAll { waiter in
            guard count(waiter.key) >= waiter.threshold else { return false }
            ready.append(waiter.continuation)
            return true
        }
        return ready
    }

    /// Removes waiter `id` (its task was cancelled) and returns its continuation to resume
    /// once the lock is released; `nil` when it is not waiting (not registered yet, or
    /// already let go).
    @inlinable package mutating func remove(id: UInt64) -> Continuation? {
        guard let index = waiters.firstIndex(where: { $0.id == id }) else { return nil }
        return waiters.remove(at: index).continuation
    }
}

extension CountWaiters where Key == Void {
    /// ``takeSatisfied(count:)`` for an owner with a single count.
    @inlinable package mutating func takeSatisfied(by count: Int) -> [Continuation] {
        takeSatisfied { _ in count }
    }
}

extension Lock {
    /// Suspends until `count`, read under the lock, reaches `threshold`, registering in the
    /// ``CountWaiters`` at `waiters` unless it already has; returns early, and at once, when
    /// the calling task is cancelled (it resumes the same way either way: a hook's caller
    /// checks the count or `Task.isCancelled` afterwards if it must tell them apart).
    ///
    /// The owner lets the waiter go with ``CountWaiters/takeSatisfied(count:)`` wherever the
    /// count grows, under this lock; `count` must agree with what it passes there for `key`.
    /// `count` is `@Sendable` because a plain closure would tie the locked value to the
    /// caller's isolation region; `waiters` is because the cancellation handler uses it.
    @inlinable package borrowing func wait<Key>(
        untilCountOf count: @Sendable (Value) -> Int,
        reaches threshold: Int,
        key: Key,
        waiters: any WritableKeyPath<Value, CountWaiters<Key>> & Sendable
    ) async {
        // The registration race (cancelled before, or while, registering) is `suspend`'s.
        await suspend(
            { (value: inout Value, waiter: WaiterSet<Void>.Waiter) -> SuspensionDecision<Void, Bool> in
                if count(value) >= threshold { return .resume((), false) }
                value[keyPath: waiters].register(
                    id: waiter.id, threshold: threshold, key: key, continuation: waiter.continuation)
                return .wait(true)
            },
            cancelledNow: { _ in ((), false) },
            cancelled: { @Sendable value, id in
                guard let continuation = value[keyPath: waiters].remove(id: id) else { return nil }
                return { continuation.resume() }
            })
    }

    /// ``wait(untilCountOf:reaches:key:waiters:)`` for an owner with a single count.
    @inlinable package borrowing func wait(
        untilCountOf count: @Sendable (Value) -> Int,
        reaches threshold: Int,
        waiters: any WritableKeyPath<Value, CountWaiters<Void>> & Sendable
    ) async {
        await wait(untilCountOf: count, reaches: threshold, key: (), waiters: waiters)
    }
}
