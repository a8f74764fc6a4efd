/// Where a job is in its life, as the queue's file records it.
///
/// ```swift
/// let record = try queue.job(id)
/// if record?.state == .failed { print(record?.lastError?.message ?? "") }
/// if record?.state.isEnded == true { archive(id) }
/// ```
///
/// A job is `pending` until the queue claims it, `running` while its handler runs (and after a
/// crash, until the next start puts it back to `pending`), and then ends in one of the four
/// other states, which never change again.
public enum JobState: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// Waiting: not yet due, held by a constraint or a job it runs after, or simply not yet claimed.
    case pending
    /// Claimed: its handler runs (or ran when the process died).
    case running
    /// Its handler returned.
    case succeeded
    /// Its handler threw on its last attempt, or timed out, or its payload no longer decodes.
    case failed
    /// Cancelled by ``JobQueue/cancel(_:)`` or ``JobQueue/cancel(tag:)``, replaced by a unique
    /// job, or a job it runs after did not succeed.
    case cancelled
    /// Not started before its ``JobOptions/expiresAt``.
    case expired

    /// Whether the job has ended: its state never changes again.
    public var isEnded: Bool {
        switch self {
        case .pending, .running: false
        case .succeeded, .failed, .cancelled, .expired: true
        }
    }

    public var description: String { rawValue }
}
