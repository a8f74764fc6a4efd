/// What removing a task from a running graph or launch did — so the caller knows whether the
/// task's body ran.
///
/// ```swift
/// switch try run.remove("prefetch") {
/// case .prevented: print("prefetch never ran")
/// case .abandoned: print("prefetch was cancelled; the run no longer waits for it")
/// case .stillRunning: print("prefetch had started and will end with what its body does")
/// case .alreadyEnded: break
/// }
/// ```
///
/// A task's body starts only once the task has won the right to start. A removal that comes
/// first prevents the start; one that comes later can only abandon a body that runs in a task
/// of its own, and the report says which happened: a body that ran to completion is reported
/// as `succeeded` or `failed`, never as `cancelled` — except that a removal between a failed
/// attempt and the next one prevents the next one, and the task then ends as `cancelled`.
/// A removal while a body runs on a worker (`stillRunning`) prevents the attempts after it
/// too.
public enum TaskRemoval: Sendable, Hashable, CustomStringConvertible {
    /// The task had not started (or was waiting between attempts), and now never will. It
    /// ends as `cancelled`, and its dependents see that.
    case prevented
    /// The task's body was running in a task of its own (a task with a timeout, or any
    /// launcher task): it was cancelled and the run stopped waiting for it. It ends as
    /// `cancelled`; whatever the body does later is discarded.
    case abandoned
    /// The task had been handed to one of the run's own workers (a task without a timeout),
    /// whose body cannot be abandoned — it may be about to begin, or running: it ends with
    /// whatever its body does, and no further attempt follows — a task with retries whose
    /// body then fails ends as `cancelled`.
    case stillRunning
    /// The task had already ended (or ended while being removed); nothing changed.
    case alreadyEnded

    /// Whether the removal ended the task: it was prevented or abandoned.
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
