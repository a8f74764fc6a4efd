/// The delegate of a ``Launcher``: hears each task start, complete and fail.
///
/// ```swift
/// struct SplashObserver: LaunchObserver {
///     let splash: SplashModel
///     func taskCompleted(_ name: String) { MainActor.assumeIsolated { splash.advance() } }
///     func taskFailed(_ name: String, error: any Error) {
///         MainActor.assumeIsolated { splash.show(error, from: name) }
///     }
/// }
/// launcher.observe(on: .mainActor, SplashObserver(splash: splash))
/// ```
///
/// Every method has an empty default. Methods run on the ``CallbackTarget`` given to
/// ``Launcher/observe(on:_:)``, in the order things happened. Retries show up in
/// ``Launcher/events``; an observer hears a task start once and end once.
public protocol LaunchObserver: Sendable {
    /// The task's first attempt began.
    func taskStarted(_ name: String)
    /// The task completed.
    func taskCompleted(_ name: String)
    /// The task failed for good (after its retries).
    func taskFailed(_ name: String, error: any Error)
    /// The task was removed, skipped because a dependency did not succeed, or stopped
    /// because the launch ended.
    func taskCancelled(_ name: String)
    /// Every task of a readiness set has ended.
    func readinessReached(_ name: String)
    /// The launch is over.
    func launchFinished(_ outcome: RunOutcome)
}

extension LaunchObserver {
    public func taskStarted(_ name: String) {}
    public func taskCompleted(_ name: String) {}
    public func taskFailed(_ name: String, error: any Error) {}
    public func taskCancelled(_ name: String) {}
    public func readinessReached(_ name: String) {}
    public func launchFinished(_ outcome: RunOutcome) {}

    /// Calls the method that matches `event`.
    func receive(_ event: GraphEvent) {
        switch event {
        case .taskStarted(let name, 1, _): taskStarted(name)
        case .taskSucceeded(let name, _): taskCompleted(name)
        case .taskFailed(let name, let error, _): taskFailed(name, error: error)
        case .taskTimedOut(let name, _):
            taskFailed(name, error: GraphError(.timedOut, "task '\(name)' timed out", taskID: name))
        case .taskSkipped(let name, _, _), .taskCancelled(let name, _): taskCancelled(name)
        case .milestoneReached(let name, _): readinessReached(name)
        case .runFinished(let outcome, _): launchFinished(outcome)
        case .taskStarted, .taskQueued, .taskRetried, .stageStarted: break
        }
    }
}
