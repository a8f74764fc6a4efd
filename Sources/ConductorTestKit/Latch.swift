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
/// #expect(await run.report().outcome == .completed)
/// ```
///
/// ``wait()`` ignores cancellation, which models work that does not cooperate; use
/// ``waitCancellable()`` for work that does.
///
/// - Complexity: ``open()`` is O(waiters); everything else is O(1).
public final class Latch: Sendable {
    private struct State {
        var isOpen = false
        var nextID: UInt64 = 0
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
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
            defer { state.waiters = [:] }
            return state.waiters.values
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Suspends until the latch is open, ignoring cancellation.
    public func wait() async {
        await withCheckedContinuation { continuation in
            if !enqueue(continuation) { continuation.resume() }
        }
    }

    /// Suspends until the latch is open or the waiting task is cancelled. Returns whether it
    /// is open.
    @discardableResult
    public func waitCancellable() async -> Bool {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                if !enqueue(continuation, id: id, unlessCancelled: true) { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
        return isOpen
    }

    /// Adds a waiter unless the latch is open (or the task cancelled); returns whether it did.
    private func enqueue(
        _ continuation: CheckedContinuation<Void, Never>, id: UInt64? = nil, unlessCancelled: Bool = false
    ) -> Bool {
        state.withLock { state in
            if state.isOpen || (unlessCancelled && Task.isCancelled) { return false }
            let id =
                id
                ?? {
                    defer { state.nextID += 1 }
                    return state.nextID
                }()
            state.waiters[id] = continuation
            return true
        }
    }
}
