public import Foundation

/// An error from building, validating or running a ``TaskGraph``.
///
/// Every message names the culprit: the task id, the missing dependency, the cycle's path.
/// Match on ``code`` rather than on the message:
///
/// ```swift
/// do {
///     try graph.validate()
/// } catch let error where error.code == .cycle {
///     print(error.message)  // "dependencies form a loop: a → b → c → a"
/// }
/// ```
public struct GraphError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong. New codes may be added, so a `switch` should have a `default`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Kind: Hashable, Sendable, CaseIterable {
            case emptyID, duplicateID, unknownDependency, cycle, unknownTask, unknownMilestone
            case milestoneMissed, runFinished, taskFailed, timedOut, cancelled, resultUnavailable
            case laterStage, negativeDuration, invalidConfiguration
        }

        fileprivate let kind: Kind

        /// A task or milestone id is the empty string.
        public static let emptyID = Code(kind: .emptyID)
        /// Two tasks or milestones share an id.
        public static let duplicateID = Code(kind: .duplicateID)
        /// A task depends on an id that names no task.
        public static let unknownDependency = Code(kind: .unknownDependency)
        /// The dependencies form a cycle.
        public static let cycle = Code(kind: .cycle)
        /// A step of a ``Schedule`` depends on a step of a later stage, which cannot have
        /// run before it.
        public static let laterStage = Code(kind: .laterStage)
        /// A task's timeout or retry backoff is negative.
        public static let negativeDuration = Code(kind: .negativeDuration)
        /// A setting is out of range: a concurrency limit below 1, or a task's retry policy
        /// of fewer than 1 attempt or with a multiplier below 1, or a task added to a graph
        /// with ``TaskDependencies/inOrderOfAddition``. Reported before anything starts;
        /// nothing is clamped.
        public static let invalidConfiguration = Code(kind: .invalidConfiguration)
        /// An operation named a task the graph does not have.
        public static let unknownTask = Code(kind: .unknownTask)
        /// `reached(_:)` named a milestone the graph does not have.
        public static let unknownMilestone = Code(kind: .unknownMilestone)
        /// The run ended (failed or was cancelled) before the milestone was reached.
        public static let milestoneMissed = Code(kind: .milestoneMissed)
        /// A task was added to a run that has already finished.
        public static let runFinished = Code(kind: .runFinished)
        /// A required task did not succeed, which ended the run: it failed, it was skipped
        /// because a dependency did not succeed, or its body threw `CancellationError` while
        /// the run went on. The message says which. A removed task is no failure (see
        /// ``RunOutcome/completed``). Also what ``GraphRun/value(of:)`` throws for a task that
        /// failed or was skipped, required or not.
        public static let taskFailed = Code(kind: .taskFailed)
        /// A task did not finish within its timeout (also from ``GraphRun/value(of:)``).
        public static let timedOut = Code(kind: .timedOut)
        /// The task waiting in ``GraphRun/reached(_:)`` or ``GraphRun/value(of:)`` was
        /// cancelled (the run goes on), or the task whose value it waited for ended cancelled
        /// (removed, or its run stopped).
        public static let cancelled = Code(kind: .cancelled)
        /// A task read the result of a dependency that did not succeed, or a handle's type does
        /// not match what its task returns.
        public static let resultUnavailable = Code(kind: .resultUnavailable)

        public var description: String { "\(kind)" }

        /// The code whose ``description`` is `name`: how a saved report's failure is read back.
        package static func named(_ name: String) -> Code? {
            Kind.allCases.first { "\($0)" == name }.map(Code.init(kind:))
        }
    }

    /// What went wrong.
    public let code: Code
    /// A sentence that names the culprit.
    public let message: String
    /// The task the error is about, if any.
    public let taskID: String?
    /// The error behind this one, as it was thrown, so a caller can match it rather than read
    /// the message: for ``Code/taskFailed``, what the required task's body threw. `nil` when
    /// there is none — a task that was skipped, ended cancelled or timed out — and in a
    /// report read back from a file (``RunReport``'s saved form keeps the message only).
    ///
    /// ```swift
    /// do {
    ///     _ = try await graph.run()
    /// } catch where error.code == .taskFailed {
    ///     if error.underlyingError is URLError { logger.warning("offline") }
    /// }
    /// ```
    ///
    /// Not part of equality or hashing: two errors with the same code, message and task are
    /// equal whatever caused them.
    public var underlyingError: (any Error)? { cause?.error }
    private let cause: Cause?

    /// The underlying error in a box, so that `GraphError` stays `Hashable` without it.
    private struct Cause: Sendable {
        let error: any Error
    }

    package init(_ code: Code, _ message: String, taskID: String? = nil, underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.taskID = taskID
        self.cause = underlying.map(Cause.init)
    }

    public static func == (lhs: GraphError, rhs: GraphError) -> Bool {
        lhs.code == rhs.code && lhs.message == rhs.message && lhs.taskID == rhs.taskID
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(message)
        hasher.combine(taskID)
    }

    public var description: String { "GraphError.\(code): \(message)" }

    static func emptyID() -> GraphError {
        GraphError(.emptyID, "a task or milestone has an empty id")
    }

    static func duplicateID(_ id: String) -> GraphError {
        GraphError(.duplicateID, "duplicate id '\(id)'", taskID: id)
    }

    static func unknownDependency(_ missing: String, of task: String) -> GraphError {
        GraphError(.unknownDependency, "task '\(task)' depends on unknown id '\(missing)'", taskID: task)
    }

    static func cycle(_ path: [String]) -> GraphError {
        GraphError(.cycle, "dependencies form a loop: \(path.joined(separator: " → "))", taskID: path.first)
    }

    static func laterStage(_ task: String, in stage: String, dependsOn dependency: String, in later: String)
        -> GraphError
    {
        GraphError(
            .laterStage,
            "step '\(task)' in stage '\(stage)' depends on '\(dependency)', which runs in the later stage '\(later)'",
            taskID: task
        )
    }

    /// `parameter` as the API spells it: `timeout`, `retry backoff`, `retry maxBackoff`.
    static func negativeDuration(_ parameter: String, _ value: Duration, task: String) -> GraphError {
        GraphError(
            .negativeDuration, "task '\(task)' has a negative \(parameter) (\(value.shortDescription))", taskID: task)
    }

    /// A limit of zero would start nothing, ever; a negative one means nothing. Either is a
    /// mistake to report, not a value to guess at.
    static func concurrencyLimit(_ value: Int) -> GraphError {
        GraphError(.invalidConfiguration, "concurrencyLimit must be at least 1 (got \(value))")
    }

    /// A policy of no attempts would end the task without running it: reported with the task
    /// that holds it, since ``RetryPolicy/attempts(_:backoff:multiplier:maxBackoff:)`` is a
    /// value and cannot throw.
    static func retryAttempts(_ count: Int, task: String) -> GraphError {
        GraphError(
            .invalidConfiguration, "task '\(task)' has a retry policy of \(count) attempts; it needs at least 1",
            taskID: task)
    }

    /// A multiplier below 1 would make each wait shorter than the one before (zero: no wait
    /// after the second attempt): reported like ``retryAttempts(_:task:)``, never clamped.
    static func retryMultiplier(_ value: Int, task: String) -> GraphError {
        GraphError(
            .invalidConfiguration, "task '\(task)' has a retry multiplier of \(value); it needs at least 1",
            taskID: task)
    }

    /// A limit of no places would never let the task start: reported with the task that names
    /// it, since ``TaskLimit/init(_:name:)`` cannot throw.
    static func limitCapacity(_ limit: TaskLimit, task: String) -> GraphError {
        GraphError(
            .invalidConfiguration,
            "task '\(task)' names limit \(limit.quotedName) of capacity \(limit.capacity); a limit needs at least 1",
            taskID: task)
    }

    /// ``TaskDependencies/inOrderOfAddition`` is a launcher's order: a graph has none to follow.
    static func inOrderOfAddition(task: String) -> GraphError {
        GraphError(
            .invalidConfiguration,
            "task '\(task)' depends on the order of addition, which only a launcher has; name its dependencies",
            taskID: task)
    }

    static func unknownTask(_ id: String) -> GraphError {
        GraphError(.unknownTask, "no task with id '\(id)'", taskID: id)
    }

    static func unknownMilestone(_ name: String) -> GraphError {
        GraphError(.unknownMilestone, "no milestone named '\(name)'")
    }

    static func milestoneMissed(_ name: String) -> GraphError {
        GraphError(.milestoneMissed, "the run ended before milestone '\(name)' was reached")
    }

    static func runFinished(adding id: String) -> GraphError {
        GraphError(.runFinished, "cannot add '\(id)': the run has finished", taskID: id)
    }

    static func taskFailed(_ id: String, _ error: any Error) -> GraphError {
        GraphError(.taskFailed, "required task '\(id)' failed: \(error)", taskID: id, underlying: error)
    }

    /// A required task skipped because `dependency` did not succeed (for a reason other than
    /// a removal).
    static func taskSkipped(_ id: String, dependency: String) -> GraphError {
        GraphError(.taskFailed, "required task '\(id)' was skipped: '\(dependency)' did not succeed", taskID: id)
    }

    /// A required task whose body threw `CancellationError` while the run went on: no removal
    /// and no stop cancelled it.
    static func taskCancelled(_ id: String) -> GraphError {
        GraphError(
            .taskFailed,
            "required task '\(id)' ended cancelled (its body threw CancellationError) while the run went on",
            taskID: id)
    }

    static func timedOut(_ id: String, after duration: Duration) -> GraphError {
        GraphError(.timedOut, "task '\(id)' timed out after \(duration.shortDescription)", taskID: id)
    }

    /// For a waiter of a milestone whose task was cancelled: the run is not affected.
    static func cancelled(waitingFor milestone: String) -> GraphError {
        GraphError(.cancelled, "waiting for milestone '\(milestone)' was cancelled; the run goes on")
    }

    /// For ``GraphRun/value(of:)``: task `id` failed, required or not.
    static func failed(task id: String, _ error: any Error) -> GraphError {
        GraphError(.taskFailed, "task '\(id)' failed: \(error)", taskID: id, underlying: error)
    }

    /// For ``GraphRun/value(of:)``: task `id` was skipped, required or not.
    static func skipped(task id: String, dependency: String) -> GraphError {
        GraphError(.taskFailed, "task '\(id)' was skipped: '\(dependency)' did not succeed", taskID: id)
    }

    /// For ``GraphRun/value(of:)``: task `id` ended cancelled — `removed`, or its run stopped,
    /// or its body threw `CancellationError`.
    static func cancelled(task id: String, removed: Bool) -> GraphError {
        let why = removed ? "was removed" : "ended cancelled"
        return GraphError(.cancelled, "task '\(id)' \(why) and has no value", taskID: id)
    }

    /// For a waiter of a task's value whose own task was cancelled: the task is not affected.
    static func cancelled(waitingForTask id: String) -> GraphError {
        GraphError(.cancelled, "waiting for the value of task '\(id)' was cancelled; the task goes on", taskID: id)
    }

    /// For a parent whose ``TaskContext/join()`` the run's stop ended.
    static func cancelled(joining id: String) -> GraphError {
        GraphError(.cancelled, "task '\(id)' stopped waiting for its subtasks: the run was stopped", taskID: id)
    }

    /// A handle whose type is not what its task returns (a handle of another graph's task of
    /// the same id).
    static func valueType(_ id: String, expected: Any.Type) -> GraphError {
        GraphError(.resultUnavailable, "task '\(id)' does not return \(expected)", taskID: id)
    }

    static func resultUnavailable(_ dependency: String, in task: String) -> GraphError {
        GraphError(
            .resultUnavailable,
            "task '\(task)' read the result of '\(dependency)', which did not succeed",
            taskID: task
        )
    }
}

/// What an app shows: `error.localizedDescription` is the message that names the culprit,
/// not Foundation's "The operation could not be completed".
extension GraphError: LocalizedError {
    public var errorDescription: String? { message }
}

extension GraphError: CodedError { package var codeName: String { "\(code)" } }
