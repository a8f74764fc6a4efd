/// Continuations of suspended tasks, kept in a lock's state by id, in the order they came.
///
/// It only keeps them: a transition that lets waiters go returns their continuations, and the
/// owner resumes them once its lock is released. ``Lock/suspend(_:cancelledNow:perform:cancelled:)`` is the one
/// place that registers a waiter, so the race between registering and the waiting task's
/// cancellation is handled once: either the registering transition sees the cancellation
/// (and never registers), or the cancellation handler finds the waiter and takes it out.
///
/// ```swift
/// struct State { var readers = WaiterSet<Int>(); var value: Int? }
/// let state = Lock(State())
/// let value = await state.suspend(
///     { (state: inout State, waiter: WaiterSet<Int>.Waiter) -> SuspensionDecision<Int, Bool> in
///         if let value = state.value { return .resume(value, false) }
///         state.readers.insert(waiter)
///         return .wait(true)
///     },
///     cancelledNow: { _ in (0, false) },
///     cancelled: { @Sendable state, id in
///         guard let waiter = state.readers.remove(id) else { return nil }
///         return { waiter.resume(returning: 0) }
///     })
/// ```
@usableFromInline package struct WaiterSet<Output: Sendable>: Sendable {
    #if DEBUG
        /// Checked in debug builds, which trap on a waiter resumed twice or never.
        @usableFromInline package typealias Continuation = CheckedContinuation<Output, Never>
    #else
        /// Unchecked in release builds: every waiter is resumed exactly once by construction
        /// (``Lock/suspend(_:cancelledNow:perform:cancelled:)`` and its owners), and debug
        /// builds check it. `CheckedContinuation` is a resilient type of the standard library,
        /// so each copy of a waiter that holds one goes through its value witnesses and looks
        /// its generic metadata up at run time, a call into the runtime where a pointer copy
        /// would do; `UnsafeContinuation` is frozen and copied as a pointer.
        @usableFromInline package typealias Continuation = UnsafeContinuation<Output, Never>
    #endif

    /// A suspended task: the id its cancellation handler names it by, and its continuation.
    @usableFromInline package struct Waiter: Sendable {
        @usableFromInline package let id: UInt64
        @usableFromInline package let continuation: Continuation

        @inlinable package init(id: UInt64, continuation: Continuation) {
            self.id = id
            self.continuation = continuation
        }

        @inlinable package func resume(returning output: sending Output) {
            continuation.resume(returning: output)
        }
    }

    @usableFromInline var waiters: [Waiter] = []

    @inlinable package init() {}

    @inlinable package var isEmpty: Bool { waiters.isEmpty }
    @inlinable package var count: Int { waiters.count }

    @inlinable package mutating func insert(_ waiter: Waiter) {
        waiters.append(waiter)
    }

    /// Takes out waiter `id`; `nil` when it is not here (not registered, or already let go).
    /// - Complexity: O(count).
    @inlinable package mutating func remove(_ id: UInt64) -> Waiter? {
        guard let index = waiters.firstIndex(where: { $0.id == id }) else { return nil }
        return waiters.remove(at: index)
    }

    /// Takes out every waiter, in the order they came.
    @inlinable package mutating func removeAll() -> [Waiter] {
        defer { waiters.removeAll() }
        return waiters
    }

    /// Takes out the waiters `isReady` accepts, in the order they came.
    @inlinable package mutating func removeAll(where isReady: (Waiter) -> Bool) -> [Waiter] {
        var ready: [Waiter] = []
        waiters.removeAll { waiter in
            guard isReady(waiter) else { return false }
            ready.append(waiter)
            return true
        }
        return ready
    }
}

/// What a registering transition decided (see ``Lock/suspend(_:cancelledNow:perform:cancelled:)``).
@usableFromInline package enum SuspensionDecision<Output: Sendable, Effect: Sendable>: Sendable {
    /// The transition registered the waiter; a later transition resumes it.
    case wait(Effect)
    /// Go on at once with `output`; nothing was registered.
    case resume(Output, Effect)
}

/// Ids for waiters, unique per process, so no owner needs a counter of its own (or a lock
/// acquisition to read one) before it registers.
@usableFromInline package enum WaiterID {
    @usableFromInline static let counter = AtomicCounter()

    @inlinable package static func next() -> UInt64 { counter.next() }
}
