import ConductorTestKit

/// Waits for every task to end — unless the waiting task is cancelled first (a test's time
/// limit does that): then it cancels them all and stops waiting at once, returning `false`.
/// A test that awaits its callers with this fails on a caller that never ends instead of
/// hanging the whole run, since a plain `await task.value` ignores the test's cancellation.
///
/// ```swift
/// guard await awaitAll(callers) else {
///     Issue.record("seed \(seed): a caller never ended")
///     return
/// }
/// ```
func awaitAll<Success: Sendable>(_ tasks: [Task<Success, Never>]) async -> Bool {
    let finished = Latch()
    let watcher = Task {
        for task in tasks { _ = await task.value }
        finished.open()
    }
    let ended = await finished.waitCancellable()
    if !ended {
        for task in tasks { task.cancel() }
        watcher.cancel()
    }
    return ended
}
