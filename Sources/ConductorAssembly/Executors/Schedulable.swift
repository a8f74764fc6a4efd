import Dispatch

/// An actor bound to a ``QueueExecutor``: every call into it runs on that executor's queue.
///
/// ```swift
/// actor AccountInfoProvider: Schedulable {
///     nonisolated let executor: QueueExecutor
///     init(executor: QueueExecutor) { self.executor = executor }
///     func fetchAccountInfo() async throws -> AccountInfo { try await api.accountInfo() }
///     func invalidateCache() {}
/// }
/// let provider = AccountInfoProvider(executor: QueueExecutor(label: "account"))
///
/// let info = try await provider.schedule { provider in try await provider.fetchAccountInfo() }
/// provider.scheduleBlock { provider in provider.invalidateCache() }  // fire and forget, in order
/// ```
///
/// Conforming is all it takes: the protocol supplies `unownedExecutor`, so the actor's
/// isolation is the executor's queue, and the compiler checks every call from outside.
public protocol Schedulable: Actor {
    /// The executor the actor runs on.
    nonisolated var executor: QueueExecutor { get }
}

extension Schedulable {
    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        executor.asUnownedSerialExecutor()
    }

    /// Runs `body` isolated to the actor, on its executor, and returns its result.
    public nonisolated func schedule<Result: Sendable, Failure: Error>(
        _ body: @Sendable (isolated Self) async throws(Failure) -> Result
    ) async throws(Failure) -> Result {
        try await body(self)
    }

    /// Runs `body` isolated to the actor, without waiting for it. Blocks scheduled from one
    /// thread run in the order they were scheduled.
    ///
    /// - Complexity: one `DispatchQueue.async`; no task is created.
    public nonisolated func scheduleBlock(_ body: @escaping @Sendable (isolated Self) -> Void) {
        executor.queue.async {
            self.assumeOnExecutor(body)
        }
    }

    /// Runs `body` isolated to the actor, synchronously. Call it on the actor's executor — for
    /// example from a legacy GCD callback delivered on its queue. Off the executor it fails with
    /// a message naming the actor and the executor.
    public nonisolated func assumeOnExecutor<Result: Sendable>(
        file: StaticString = #file,
        line: UInt = #line,
        _ body: (isolated Self) throws -> Result
    ) rethrows -> Result {
        if !executor.isCurrent {
            IsolationFailure.report(
                "\(Self.self) was called off its executor: expected \(executor)",
                file: file,
                line: line
            )
            // Reached only when a test's failure handler returned instead of crashing: run the
            // body where it belongs rather than off the executor.
            return try executor.queue.sync { try assumeIsolated(body, file: file, line: line) }
        }
        return try assumeIsolated(body, file: file, line: line)
    }
}
