/// How a task ended.
///
/// ```swift
/// switch report["comments"]?.outcome {
/// case .succeeded?: showComments()
/// case .skipped(let dependency)?: log("comments skipped: \(dependency) failed")
/// default: showPlaceholder()
/// }
/// ```
public enum TaskOutcome: Sendable, CustomStringConvertible {
    case succeeded
    case failed(any Error)
    case timedOut(after: Duration)
    /// Not run because `dependency` did not succeed.
    case skipped(dependency: String)
    /// Cancelled, removed, or never started because the run stopped; also a body that threw
    /// `CancellationError`.
    case cancelled

    /// Whether the task succeeded.
    public var isSuccess: Bool {
        if case .succeeded = self { return true }
        return false
    }

    /// The outcome without its error: what a test compares, since `any Error` is not
    /// `Equatable`.
    ///
    /// ```swift
    /// #expect(report["sku"]?.outcome.kind == .timedOut(after: .seconds(2)))
    /// #expect(report["comments"]?.outcome.kind == .failed)
    /// ```
    public var kind: Kind {
        switch self {
        case .succeeded: .succeeded
        case .failed: .failed
        case .timedOut(let after): .timedOut(after: after)
        case .skipped(let dependency): .skipped(dependency: dependency)
        case .cancelled: .cancelled
        }
    }

    /// A ``TaskOutcome`` with everything but the error, which `Equatable` cannot compare.
    public enum Kind: Hashable, Sendable {
        case succeeded
        case failed
        case timedOut(after: Duration)
        case skipped(dependency: String)
        case cancelled
    }

    public var description: String {
        switch self {
        case .succeeded: "succeeded"
        case .failed(let error): "failed: \(error)"
        case .timedOut(let after): "timed out after \(after.shortDescription)"
        case .skipped(let dependency): "skipped ('\(dependency)' did not succeed)"
        case .cancelled: "cancelled"
        }
    }
}

/// How a run ended.
///
/// ```swift
/// if case .failed(let error) = report.outcome { log(error.message) }  // names the task
/// ```
public enum RunOutcome: Hashable, Sendable, CustomStringConvertible {
    /// Every required task succeeded (optional ones may have failed), except those a removal
    /// ended (``GraphRun/remove(_:)`` or ``Launcher/remove(_:)``; ``TaskRecord/wasRemoved``)
    /// and those skipped because they needed one: removing is deliberate, not a failure. That
    /// includes a task removed while its body ran on a worker (``TaskRemoval/stillRunning``),
    /// whatever that cancelled body then did.
    case completed
    /// A required task did not succeed, which ended the run: it failed or timed out, was
    /// skipped because a dependency did not succeed (other than by a removal), or its body
    /// threw `CancellationError` while the run went on. The error names it (``GraphError/taskID``).
    case failed(GraphError)
    /// The run was cancelled.
    case cancelled

    public var description: String {
        switch self {
        case .completed: "completed"
        case .failed(let error): "failed (\(error.message))"
        case .cancelled: "cancelled"
        }
    }
}

/// What happened to one task of a run, and when. Times are offsets from the run's start.
///
/// ```swift
/// for task in report.tasks {
///     print(task.id, task.outcome, task.waitTime ?? .zero, task.runTime ?? .zero, task.attempts)
/// }
/// ```
public struct TaskRecord: Sendable, CustomStringConvertible {
    /// The task's id.
    public let id: String
    /// The stage it belonged to, for tasks of a ``Schedule``.
    public let stage: String?
    /// The ids of its dependencies.
    public let dependencies: [String]
    /// How it ended.
    public let outcome: TaskOutcome
    /// When its dependencies were satisfied, if they were.
    public let queuedAt: Duration?
    /// When its first attempt's body was called, if it ran: read just before the call, so
    /// the time a worker took to get to it counts as waiting (``waitTime``), not running.
    public let startedAt: Duration?
    /// When it ended: for a body that returned, threw or timed out, read just after, before
    /// the run records it, so ``runTime`` is the body's own; otherwise when it was cancelled
    /// or skipped.
    public let endedAt: Duration
    /// How many attempts it made.
    public let attempts: Int
    /// Where it ran: `"main actor"`, or `"global"` for the default executors.
    public let placement: String
    /// Whether a removal (``GraphRun/remove(_:)``) ended it: before it started, between
    /// attempts, or while its body ran — then it is cancelled whatever its body did. Its outcome
    /// is then ``TaskOutcome/cancelled``, and neither that end nor the skips it causes fails the run.
    ///
    /// ```swift
    /// try run.remove("prefetch")
    /// let report = try await run.report()
    /// #expect(report["prefetch"]?.wasRemoved == true)
    /// ```
    public let wasRemoved: Bool
    /// The task whose body added this one as a subtask (``TaskContext/addSubtask(_:dependsOn:options:_:)``);
    /// `nil` for any other task. A report lists a task's subtasks right after it.
    public let parent: String?

    package init(
        id: String, stage: String?, dependencies: [String], outcome: TaskOutcome, queuedAt: Duration?,
        startedAt: Duration?, endedAt: Duration, attempts: Int, placement: String, parent: String? = nil,
        wasRemoved: Bool = false
    ) {
        self.id = id
        self.stage = stage
        self.dependencies = dependencies
        self.outcome = outcome
        self.queuedAt = queuedAt
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.attempts = attempts
        self.placement = placement
        self.wasRemoved = wasRemoved
        self.parent = parent
    }

    /// The time from being queued to starting.
    public var waitTime: Duration? {
        guard let queuedAt, let startedAt else { return nil }
        return startedAt - queuedAt
    }

    /// The time from starting to ending.
    public var runTime: Duration? {
        startedAt.map { endedAt - $0 }
    }

    public var description: String { "\(id): \(outcome)" }
}

/// The final account of a run: each task's outcome and timings, and the critical path.
///
/// ```swift
/// let report = try await run.report()
/// print(report.duration, report.criticalPath)   // 412 ms, ["basicInfo", "sku", "freight"]
/// for task in report.tasks where !task.outcome.isSuccess { print(task) }
/// ```
public struct RunReport: Sendable {
    /// How the run ended.
    public let outcome: RunOutcome
    /// Every task, in the order it was added.
    ///
    /// - Complexity: built on first access, O(tasks); a run whose report is only checked for
    ///   its outcome never pays for the records.
    public var tasks: [TaskRecord] { records.all }
    private let records: TaskRecords
    /// Milestones, in the order they were reached, with the time.
    public let milestones: [(name: String, at: Duration)]
    /// From the start of the run to its end.
    public let duration: Duration
    /// The chain of tasks that determined when the run ended: from the task that ended last —
    /// for a failed run, the required task that ended it, whatever ended after — back through
    /// the dependency that ended last, to a task with none. Tasks that never started (a
    /// skipped required task among them) are left out.
    public let criticalPath: [String]
    /// What ran: the launcher's name, the run's id and when it started. `nil` only for a
    /// report read from a file saved before format 1.1, which did not record it.
    public package(set) var identity: RunIdentity?

    package init(
        outcome: RunOutcome, tasks: [TaskRecord], milestones: [(name: String, at: Duration)], duration: Duration,
        criticalPath: [String]
    ) {
        self.init(
            outcome: outcome, records: TaskRecords(tasks), milestones: milestones, duration: duration,
            criticalPath: criticalPath)
    }

    init(
        outcome: RunOutcome, records: TaskRecords, milestones: [(name: String, at: Duration)], duration: Duration,
        criticalPath: [String]
    ) {
        self.outcome = outcome
        self.records = records
        self.milestones = milestones
        self.duration = duration
        self.criticalPath = criticalPath
    }

    /// The record of the task with `id`.
    public subscript(id: String) -> TaskRecord? {
        tasks.first { $0.id == id }
    }

    /// Whether the run completed: every required task succeeded, removed ones excepted (see
    /// ``RunOutcome/completed``).
    public var isSuccess: Bool {
        if case .completed = outcome { return true }
        return false
    }
}

extension RunReport: CustomStringConvertible {
    /// One line for `print(report)` and logs: how the run ended, how long it took, how many
    /// tasks ended each way, and the critical path.
    ///
    /// ```text
    /// completed in 1.20 s · 12 succeeded, 1 failed, 2 skipped · critical path: channel → config → home
    /// ```
    ///
    /// Each task's own outcome is in ``tasks``; ``TimelineRenderer`` draws their timings.
    public var description: String {
        var parts = ["\(outcome) in \(duration.shortDescription)", Self.counts(of: tasks)]
        if !criticalPath.isEmpty {
            parts.append("critical path: " + criticalPath.joined(separator: " → "))
        }
        return parts.joined(separator: " · ")
    }

    /// "12 succeeded, 1 failed, 2 skipped": the outcomes that occurred, in a fixed order.
    private static func counts(of tasks: [TaskRecord]) -> String {
        let names = ["succeeded", "failed", "timed out", "skipped", "cancelled"]
        var counts = [Int](repeating: 0, count: names.count)
        for task in tasks {
            switch task.outcome {
            case .succeeded: counts[0] += 1
            case .failed: counts[1] += 1
            case .timedOut: counts[2] += 1
            case .skipped: counts[3] += 1
            case .cancelled: counts[4] += 1
            }
        }
        let parts = zip(counts, names).filter { $0.0 > 0 }.map { "\($0.0) \($0.1)" }
        return parts.isEmpty ? "no tasks" : parts.joined(separator: ", ")
    }
}

/// A report's task records, made from the run's final state the first time they are read.
final class TaskRecords: Sendable {
    private let make: (@Sendable () -> [TaskRecord])?
    private let built: Lock<[TaskRecord]?>

    init(_ records: [TaskRecord]) {
        make = nil
        built = Lock(records)
    }

    init(making make: @escaping @Sendable () -> [TaskRecord]) {
        self.make = make
        built = Lock(nil)
    }

    var all: [TaskRecord] {
        if let records = built.withLock({ $0 }) { return records }
        let records = make?() ?? []
        return built.withLock { built in
            if built == nil { built = records }
            return built!
        }
    }
}
