/// What removing a task from a running graph or launch did — so the caller knows whether the
/// task's body ran.
///
/// ```swift
/// switch try run.remove("prefetch") {
/// case .prevented: print("prefetch never ran")
/// case .abandoned: print("prefetch was cancelled; the run no longer waits for it")
/// case .stillRunning: print("prefetch was cancelled; the run waits for its body to return")
/// case .alreadyEnded: break
/// }
/// ```
///
/// A task's body starts only once the task has won the right to start. A removal that comes
/// first prevents the start; one that comes later cancels the body that runs. Either way,
/// every answer but `alreadyEnded` means the removal ended the task: it is reported
/// `cancelled` with ``TaskRecord/wasRemoved`` set, whatever its body then did, no attempt
/// follows, its dependents see a cancelled dependency, and a required task is excused (the run
/// can still complete). `alreadyEnded` means the task's own end came first, and the report
/// says how it ended.
public enum TaskRemoval: Sendable, Hashable, CustomStringConvertible {
    /// The task had not started (or was waiting between attempts), and now never will. It
    /// ends as `cancelled`, and its dependents see that.
    case prevented
    /// The task's body could be abandoned — a task with a timeout, or any launcher task: it
    /// was cancelled and the run stopped waiting for it. It ends as `cancelled`; whatever the
    /// body does later is discarded.
    case abandoned
    /// The task's body runs on one of the run's own workers without a timeout, so it is not
    /// abandoned: the body is cancelled — it sees `Task.isCancelled` and its
    /// `withTaskCancellationHandler` handlers run — and the run waits for it to return. The
    /// task then ends as `cancelled`, removed, whatever the body did: a value it returns is
    /// discarded, an error it throws is not a failure, and no further attempt follows. A body
    /// handed out but not yet begun never begins, or begins cancelled. (Before, this answer left the body to run
    /// uncancelled, and the task ended with what its body did.)
    case stillRunning
    /// The task had already ended (or ended while being removed); nothing changed.
    case alreadyEnded

    /// Whether the removal stopped the task's work at once: it was prevented, or abandoned.
    /// A `stillRunning` task is removed too, once its cancelled body returns
    /// (``TaskRecord/wasRemoved``).
    public var removed: Bool { self == .prevented || self == .abandoned }

    public var description: String {
        switch self {
        case .prevented: "prevented"
        case .abandoned: "abandoned"
        case .stillRunning: "still running"
        case .alreadyEnded: "already ended"
        }
    }
}
