import Dispatch

/// A value that may only be used on one executor: for classes that cannot be actors.
///
/// ```swift
/// let tracker = Confined(LegacyTracker(), on: background)
///
/// background.queue.async {
///     tracker.withValue { $0.add(ConsoleTracker()) }  // checked: runs on `background`
/// }
/// let count = await tracker.schedule { $0.services.count }  // from anywhere: hops there
/// ```
///
/// In debug builds every synchronous access checks that it runs on ``executor`` and fails
/// with a message naming the value's type and the executor. In release builds the check is
/// compiled out, so an access costs what a plain property access costs.
public struct Confined<Value>: @unchecked Sendable {
    // Why `@unchecked Sendable` is safe: the value is reachable only through `withValue`,
    // which runs on `executor` (checked on every access in debug builds), or through
    // `schedule`, which runs the body as a block on the executor's serial queue. Every access
    // therefore happens on one serial queue, one at a time — the same argument as SwiftNIO's
    // `NIOLoopBound`. The value itself is handed over `sending`, so no other reference to it
    // survives in the creating context.
    private let box: Box
    /// The executor the value belongs to.
    public let executor: QueueExecutor

    /// Confines `value` to `executor`. `value` is handed over: the caller keeps no reference.
    public init(_ value: sending Value, on executor: QueueExecutor) {
        self.box = Box(value)
        self.executor = executor
    }

    /// Runs `body` with the value. Call it on ``executor``.
    ///
    /// - Complexity: O(1); in release builds, no check at all.
    public func withValue<Result>(
        file: StaticString = #file,
        line: UInt = #line,
        _ body: (inout Value) throws -> Result
    ) rethrows -> Result {
        #if DEBUG
            if !executor.isCurrent {
                IsolationFailure.report(
                    "Confined<\(Value.self)> was accessed off its executor: expected \(executor)",
                    file: file,
                    line: line
                )
            }
        #endif
        return try body(&box.value)
    }

    /// Hops to ``executor``, runs `body` with the value there, and returns its result.
    public func schedule<Result: Sendable, Failure: Error>(
        _ body: @escaping @Sendable (inout Value) throws(Failure) -> Result
    ) async throws(Failure) -> Result {
        let box = self.box
        let outcome: Swift.Result<Result, Failure> = await withCheckedContinuation { continuation in
            executor.queue.async {
                continuation.resume(returning: Swift.Result { () throws(Failure) -> Result in try body(&box.value) })
            }
        }
        return try outcome.get()
    }

    // `@unchecked Sendable` for the reason given at the top of `Confined`: only the executor touches `value`.
    private final class Box: @unchecked Sendable {
        var value: Value
        init(_ value: sending Value) { self.value = value }
    }
}
