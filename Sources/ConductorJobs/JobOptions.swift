public import Foundation

/// How one job runs: when, how often, after what, under what conditions.
///
/// ```swift
/// let id = try await queue.enqueue(
///     PlaceOrder.self, order,
///     options: JobOptions(
///         unique: .keepExisting("order-\(order.orderID)"),
///         tags: ["orders"],
///         expiresAt: .now + 86_400,
///         retry: .attempts(5, backoff: .seconds(1)),
///         timeout: .seconds(30),
///         constraints: ["network"]))
/// ```
///
/// Every option is stored with the job, so it holds across restarts.
public struct JobOptions: Sendable {
    /// A name only one not-ended job may hold, and what to do when one already does.
    public var unique: JobUniqueness?
    /// Labels for ``JobQueue/cancel(tag:)`` and ``JobQueue/jobs(in:tag:)``.
    public var tags: Set<String>
    /// The job is not claimed before this wall-clock time.
    public var notBefore: Date?
    /// A job not started by this wall-clock time ends ``JobState/expired`` (a job already
    /// running is not stopped).
    public var expiresAt: Date?
    /// Orders due jobs when the concurrency limit holds them back (higher first, then in the
    /// order they were enqueued); also the priority the handler runs at.
    public var priority: TaskPriority
    /// Attempts and the waits between them, counted across deliveries: a job re-run after a
    /// crash gets what its earlier deliveries left (and at least one attempt).
    public var retry: RetryPolicy
    /// The longest one attempt may take; an attempt that takes longer is abandoned and counts as
    /// failed, and a last one ends the job ``JobQueueError/Code/timedOut``. `nil`: no limit.
    public var timeout: Duration?
    /// Jobs this one runs after: it is claimed only once all have succeeded; if one fails, is
    /// cancelled or expires, this one ends cancelled with ``JobQueueError/Code/dependencyFailed``,
    /// in the same transaction. An id the file does not hold (an ended job deleted after
    /// ``JobQueueConfiguration/endedJobRetention`` too) fails the enqueue with
    /// ``JobQueueError/Code/unknownJob``.
    public var after: [JobID]
    /// Names of constraints (``JobConstraint``) that must all hold for the job to be claimed.
    public var constraints: [String]

    /// Options with the given settings; by default a job runs once it is enqueued, at medium
    /// priority, up to 3 attempts (200 ms, then 400 ms apart), with no time limit.
    public init(
        unique: JobUniqueness? = nil,
        tags: Set<String> = [],
        notBefore: Date? = nil,
        expiresAt: Date? = nil,
        priority: TaskPriority = .medium,
        retry: RetryPolicy = .attempts(3, backoff: .milliseconds(200)),
        timeout: Duration? = nil,
        after: [JobID] = [],
        constraints: [String] = []
    ) {
        self.unique = unique
        self.tags = tags
        self.notBefore = notBefore
        self.expiresAt = expiresAt
        self.priority = priority
        self.retry = retry
        self.timeout = timeout
        self.after = after
        self.constraints = constraints
    }
}

/// What a unique job's name means when a not-ended job already holds it.
///
/// ```swift
/// // A second "sync" while one is pending or running: nothing new, the same id back.
/// let id = try await queue.enqueue(Sync.self, .init(), options: JobOptions(unique: .keepExisting("sync")))
/// // The latest draft wins: a pending save is cancelled and this one takes its place.
/// try await queue.enqueue(SaveDraft.self, draft, options: JobOptions(unique: .replaceExisting("draft-7")))
/// ```
public struct JobUniqueness: Hashable, Sendable {
    enum Policy: Hashable, Sendable { case keep, replace }

    let name: String
    let policy: Policy

    /// If a pending or running job holds `name`, enqueuing returns its id and adds nothing.
    public static func keepExisting(_ name: String) -> JobUniqueness { JobUniqueness(name: name, policy: .keep) }

    /// If a pending job holds `name`, it ends cancelled and the new job takes the name, in one
    /// transaction; a running one cannot be replaced (``JobQueueError/Code/uniqueJobRunning``).
    public static func replaceExisting(_ name: String) -> JobUniqueness {
        JobUniqueness(name: name, policy: .replace)
    }
}

extension JobOptions {
    /// Refuses what no job can run with, before anything is stored.
    func validate(kind: String) throws(JobQueueError) {
        if let timeout, timeout < .zero {
            throw .invalidOption("a negative timeout (\(timeout))", kind: kind)
        }
        let retry = self.retry
        if retry.hasInvalidCount || retry.negativeBackoff != nil {
            throw .invalidOption(
                "a retry policy of \(retry.maxAttempts) attempts, multiplier \(retry.multiplier) and backoff "
                    + "\(retry.initialBackoff)...\(retry.maxBackoff); it needs at least 1 attempt, a multiplier of "
                    + "at least 1 and no negative wait",
                kind: kind)
        }
    }
}
