public import Foundation
public import Logging

/// How a ``JobQueue`` runs and stores its jobs.
///
/// ```swift
/// var configuration = JobQueueConfiguration()
/// configuration.concurrencyLimit = 2
/// configuration.logger = Logger(label: "app.jobs")
/// let queue = try JobQueue(path: jobsURL.path, configuration: configuration)
/// ```
///
/// In tests, drive waits with a manual clock and wall time with `now`:
///
/// ```swift
/// let clock = ManualClock()
/// let start = Date(timeIntervalSince1970: 1_000_000)
/// let configuration = JobQueueConfiguration(
///     clock: clock, now: { start + Double(clock.now.offset.components.seconds) })
/// ```
public struct JobQueueConfiguration: Sendable {
    /// How SQLite syncs a commit to the disk, and so what a power loss can take:
    /// ``Synchronous/full`` by default, or ``Synchronous/normal``.
    public enum Synchronous: String, Hashable, Sendable {
        /// Each commit is on the disk before it returns: nothing committed is lost on power loss.
        case full = "FULL"
        /// In WAL mode, commits survive a crash of the process, but the last ones before a power
        /// loss may be rolled back. Faster.
        case normal = "NORMAL"
    }

    /// The most jobs running at once, at least 1.
    public var concurrencyLimit: Int
    /// How durable a commit is; ``Synchronous/full`` by default.
    public var synchronous: Synchronous
    /// How long a write waits for another connection's lock before it fails with
    /// ``JobQueueError/Code/databaseLocked``.
    public var busyTimeout: Duration
    /// What the dispatcher, timeouts and retry waits sleep on.
    public var clock: any Clock<Duration>
    /// Wall time, as stored for ``JobOptions/notBefore``, ``JobOptions/expiresAt`` and a job's times.
    public var now: @Sendable () -> Date
    /// How many deliveries of jobs one graph run takes, at least 1; 1,000 by default. A run
    /// keeps a record of every task it ran, so the queue then starts a fresh run for the next
    /// deliveries and closes the full one, which ends once its jobs have: a queue that runs for
    /// weeks holds the records of at most about this many jobs, not of every job since its start.
    public var jobsPerGraphRun: Int
    /// How long an ended job stays in the file for ``JobQueue/job(_:)`` and ``JobQueue/jobs(in:tag:)``
    /// to read: 7 days by default; `nil` keeps every job. The queue deletes older ended jobs at
    /// start and then at most once an hour (``JobQueue/removeEnded(before:)`` does it on demand),
    /// so a queue that runs for months does not fill the disk with the jobs it ran.
    public var endedJobRetention: Duration?
    /// Where the jobs' graph runs send their spans and metrics.
    public var telemetry: Telemetry
    /// Where the queue logs what it cannot report to a caller (a completion it could not record
    /// yet, unknown kinds at start-up).
    public var logger: Logger

    /// A configuration with the given settings.
    public init(
        concurrencyLimit: Int = 4,
        synchronous: Synchronous = .full,
        busyTimeout: Duration = .seconds(5),
        clock: any Clock<Duration> = ContinuousClock(),
        now: @escaping @Sendable () -> Date = { Date() },
        jobsPerGraphRun: Int = 1_000,
        endedJobRetention: Duration? = .seconds(7 * 86_400),
        telemetry: Telemetry = .bootstrapped,
        logger: Logger = Logger(label: "conductor.jobs", factory: { _ in SwiftLogNoOpLogHandler() })
    ) {
        self.concurrencyLimit = concurrencyLimit
        self.synchronous = synchronous
        self.busyTimeout = busyTimeout
        self.clock = clock
        self.now = now
        self.jobsPerGraphRun = jobsPerGraphRun
        self.endedJobRetention = endedJobRetention
        self.telemetry = telemetry
        self.logger = logger
    }
}
