import Conductor

/// A one-shot signal: tasks ``wait()`` until someone calls ``open()``, and every wait after
/// that returns at once.
///
/// A test uses it to hold work "running" for exactly as long as it needs, without sleeping:
///
/// ```swift
/// let release = Latch()
/// var graph = TaskGraph()
/// graph.add("slow") { _ in await release.wait() }
/// let run = try graph.start()
/// // … check what is true while "slow" runs …
/// release.open()
/// #expect(try await run.report().outcome == .completed)
/// ```
///
/// ``wait()`` ignores cancellation, which models work that does not cooperate; use
/// ``waitCancellable()`` for work that does.
///
/// - Complexity: ``open()`` is O(waiters); everything else is O(1).
public final class Latch: Sendable {
    private struct State {
        var isOpen = false
        var waiters = WaiterSet<Void>()

        /// Keeps `waiter` until the latch opens, or lets it go on at once when it is open.
        mutating func register(_ waiter: WaiterSet<Void>.Waiter) -> SuspensionDecision<Void, Void> {
            if isOpen { return .resume((), ()) }
            waiters.insert(waiter)
            return .wait(())
        }
    }

    private let state = Lock(State())

    public init() {}

    /// Whether ``open()`` has been called.
    public var isOpen: Bool { state.withLock { $0.isOpen } }

    /// Opens the latch: every waiting task resumes, and later waits return at once. Opening
    /// it again does nothing.
    public func open() {
        let waiters = state.withLock { state in
            state.isOpen = true
            return state.waiters.removeAll()
        }
        for waiter in waiters { waiter.resume(returning: ()) }
    }

    /// Suspends until the latch is open, ignoring cancellation.
    public func wait() async {
        await state.suspendIgnoringCancellation { state, waiter in state.register(waiter) }
    }

    /// Suspends until the latch is open or the waiting task is cancelled. Returns whether it
    /// is open.
    @discardableResult
    public func waitCancellable() async -> Bool {
        await state.suspend(
            { state, waiter in state.register(waiter) },
            cancelledNow: { _ in ((), ()) },
            cancelled: { @Sendable state, id in
                guard let waiter = state.waiters.remove(id) else { return nil }
                return { waiter.resume(returning: ()) }
            })
        return isOpen
    }
}
