/// Something that happened in a run, with the time it happened (measured on the run's
/// clock from the moment the run started).
///
/// ```swift
/// for await event in run.events {
///     switch event {
///     case .taskFailed(let id, let error, _): log("\(id) failed: \(error)")
///     case .milestoneReached(let name, _): log("reached \(name)")
///     default: break
///     }
/// }
/// ```
public enum GraphEvent: Sendable, CustomStringConvertible {
    /// A stage of a ``Schedule`` began: every task before it has ended.
    case stageStarted(String, at: Duration)
    /// The task's dependencies are satisfied; it waits for a worker.
    case taskQueued(String, at: Duration)
    /// An attempt of the task began: a worker took it. The time is when it was handed out;
    /// ``TaskRecord/startedAt`` is when its body was called, which a busy machine can make a
    /// little later.
    case taskStarted(String, attempt: Int, at: Duration)
    /// The task succeeded.
    case taskSucceeded(String, at: Duration)
    /// An attempt failed (or timed out) and the task will be tried again after `delay`.
    case taskRetried(String, attempt: Int, error: any Error, delay: Duration, at: Duration)
    /// The task failed for good.
    case taskFailed(String, error: any Error, at: Duration)
    /// The task's last attempt did not finish within its timeout.
    case taskTimedOut(String, at: Duration)
    /// The task did not run because `dependency` did not succeed.
    case taskSkipped(String, dependency: String, at: Duration)
    /// The task was cancelled, removed, or ended because the run stopped.
    case taskCancelled(String, at: Duration)
    /// Every task before the milestone has ended.
    case milestoneReached(String, at: Duration)
    /// The run is over; this is always the last event.
    case runFinished(RunOutcome, at: Duration)

    /// When it happened, since the run started.
    public var time: Duration {
        switch self {
        case .stageStarted(_, let at), .taskQueued(_, let at), .taskStarted(_, _, let at),
            .taskSucceeded(_, let at), .taskRetried(_, _, _, _, let at), .taskFailed(_, _, let at),
            .taskTimedOut(_, let at), .taskSkipped(_, _, let at), .taskCancelled(_, let at),
            .milestoneReached(_, let at), .runFinished(_, let at):
            return at
        }
    }

    /// The task the event is about, if any.
    public var taskID: String? {
        switch self {
        case .taskQueued(let id, _), .taskStarted(let id, _, _), .taskSucceeded(let id, _),
            .taskRetried(let id, _, _, _, _), .taskFailed(let id, _, _), .taskTimedOut(let id, _),
            .taskSkipped(let id, _, _), .taskCancelled(let id, _):
            return id
        case .stageStarted, .milestoneReached, .runFinished:
            return nil
        }
    }

    public var description: String {
        switch self {
        case .stageStarted(let name, let at): "\(at.shortDescription) stage '\(name)' started"
        case .taskQueued(let id, let at): "\(at.shortDescription) \(id) queued"
        case .taskStarted(let id, let attempt, let at): "\(at.shortDescription) \(id) started (attempt \(attempt))"
        case .taskSucceeded(let id, let at): "\(at.shortDescription) \(id) succeeded"
        case .taskRetried(let id, let attempt, let error, let delay, let at):
            "\(at.shortDescription) \(id) attempt \(attempt) failed (\(error)); retrying in \(delay.shortDescription)"
        case .taskFailed(let id, let error, let at): "\(at.shortDescription) \(id) failed: \(error)"
        case .taskTimedOut(let id, let at): "\(at.shortDescription) \(id) timed out"
        case .taskSkipped(let id, let dependency, let at):
            "\(at.shortDescription) \(id) skipped: '\(dependency)' did not succeed"
        case .taskCancelled(let id, let at): "\(at.shortDescription) \(id) cancelled"
        case .milestoneReached(let name, let at): "\(at.shortDescription) milestone '\(name)' reached"
        case .runFinished(let outcome, let at): "\(at.shortDescription) run finished: \(outcome)"
        }
    }
}
