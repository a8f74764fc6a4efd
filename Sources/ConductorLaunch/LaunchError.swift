public import Foundation

/// An error from building or running a ``Launcher``; the message names the task.
///
/// ```swift
/// do {
///     try await launcher.run()
/// } catch let error as LaunchError where error.code == .taskFailed {
///     print(error.message)  // "required task 'config' failed: offline"
/// }
/// ```
public struct LaunchError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong. New codes may be added, so a `switch` should have a `default`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Kind: Hashable, Sendable {
            case emptyName, duplicateName, unknownDependency, unknownReadiness, launchFinished
            case taskFailed, launchEnded, cancelled, cycle, negativeDuration, invalidConfiguration
            case undoFailed, notStarted
        }

        fileprivate let kind: Kind

        /// A task or readiness set has an empty name.
        public static let emptyName = Code(kind: .emptyName)
        /// A task or readiness set has the name of one added before.
        public static let duplicateName = Code(kind: .duplicateName)
        /// A task or readiness set names a dependency that has not been added. Dependencies are
        /// added before the tasks that need them, so tasks cannot depend on each other in a
        /// cycle: the message says which to add first.
        public static let unknownDependency = Code(kind: .unknownDependency)
        /// ``Launcher/ready(_:timeout:)`` named a readiness set the launcher does not have;
        /// thrown, like ``GraphError/Code/unknownMilestone`` by ``GraphRun/reached(_:)``.
        public static let unknownReadiness = Code(kind: .unknownReadiness)
        /// A task was added after the launch had ended.
        public static let launchFinished = Code(kind: .launchFinished)
        /// A required task failed, timed out or was skipped (a task it needs did not succeed),
        /// which ended the launch; the message says which. Removing a task is no failure.
        public static let taskFailed = Code(kind: .taskFailed)
        /// The launch ended (cancelled, or failed) before a readiness set was ready.
        public static let launchEnded = Code(kind: .launchEnded)
        /// The launch, or the waiting task, was cancelled.
        public static let cancelled = Code(kind: .cancelled)
        /// The tasks' dependencies form a cycle: a task or readiness set that names itself
        /// (reported when it is added), or tasks that depend on each other in a loop (possible
        /// only by removing a task before the launch and adding it back with dependencies).
        public static let cycle = Code(kind: .cycle)
        /// A task's timeout or retry backoff, the launcher's `undoTimeout` (reported by
        /// ``Launcher/start()``), or the timeout given to ``Launcher/ready(_:timeout:)`` (thrown),
        /// is negative.
        public static let negativeDuration = Code(kind: .negativeDuration)
        /// A task's retry policy (``TaskOptions/retry``) has fewer than 1 attempt or a
        /// multiplier below 1; reported when it is added, never clamped.
        public static let invalidConfiguration = Code(kind: .invalidConfiguration)
        /// A launcher added to another one as a task had an undo fail or time out during its
        /// shutdown; the message names each one.
        public static let undoFailed = Code(kind: .undoFailed)
        /// ``Launcher/ready(_:timeout:)``'s deadline passed before the launcher was started:
        /// returned as ``LaunchReadiness/failed(_:)`` instead of
        /// ``LaunchReadiness/timedOut(after:)``, since the launch cannot be under way. Call
        /// ``Launcher/start()`` (or ``Launcher/run()``).
        public static let notStarted = Code(kind: .notStarted)

        public var description: String { "\(kind)" }
    }

    /// What went wrong.
    public let code: Code
    /// A sentence that names the culprit.
    public let message: String
    /// The task the error is about, if any.
    public let taskName: String?
    /// The error behind this one, as it was thrown, so a caller — or a `ServiceGroup`'s caller,
    /// which gets this error from `LauncherService` — can match it rather than read the message:
    ///
    /// - ``Code/taskFailed``: what the required task's ``StartupTask/run()`` threw; `nil` when
    ///   the task timed out, was skipped or ended cancelled.
    /// - ``Code/undoFailed``: what the first failed undo threw (`nil` if every one timed out);
    ///   ``undoFailures`` has each one.
    ///
    /// ```swift
    /// do {
    ///     try await launcher.run()  // or `try await group.run()` with a LauncherService
    /// } catch let error as LaunchError where error.code == .taskFailed {
    ///     if let auth = error.underlyingError as? AuthError, auth == .revoked { logger.error("signed out") }
    /// }
    /// ```
    ///
    /// Not part of equality or hashing, nor is ``undoFailures``: two errors with the same
    /// code, message and task are equal whatever caused them.
    public var underlyingError: (any Error)? { cause?.error }
    /// For ``Code/undoFailed``, every undo that failed or timed out, in the order they ended:
    /// each with its task's name (``UndoRecord/task``) and what its undo threw
    /// (``UndoOutcome/error``, `nil` for a timeout). Empty for every other code.
    ///
    /// ```swift
    /// do {
    ///     try await launcher.undo()
    /// } catch let error as LaunchError {
    ///     for undo in error.undoFailures { logger.error("undo of \(undo.task): \(undo.outcome)") }
    /// }
    /// ```
    public var undoFailures: [UndoRecord] { cause?.undos ?? [] }
    private let cause: Cause?

    /// What caused the error, in a box, so that `LaunchError` stays `Hashable` without it.
    private struct Cause: Sendable {
        var error: (any Error)?
        var undos: [UndoRecord] = []
    }

    init(
        _ code: Code, _ message: String, taskName: String? = nil, underlying: (any Error)? = nil,
        undoFailures: [UndoRecord] = []
    ) {
        self.code = code
        self.message = message
        self.taskName = taskName
        self.cause = underlying == nil && undoFailures.isEmpty ? nil : Cause(error: underlying, undos: undoFailures)
    }

    public static func == (lhs: LaunchError, rhs: LaunchError) -> Bool {
        lhs.code == rhs.code && lhs.message == rhs.message && lhs.taskName == rhs.taskName
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(message)
        hasher.combine(taskName)
    }

    public var description: String { "LaunchError.\(code): \(message)" }

    static func emptyName() -> LaunchError {
        LaunchError(.emptyName, "a start-up task or readiness set has an empty name")
    }

    static func duplicateName(_ name: String) -> LaunchError {
        LaunchError(.duplicateName, "'\(name)' was already added", taskName: name)
    }

    static func unknownDependency(_ missing: String, of name: String) -> LaunchError {
        LaunchError(
            .unknownDependency,
            "'\(name)' depends on '\(missing)', which has not been added: add '\(missing)' before '\(name)'"
                + " (dependencies are added first, so tasks cannot depend on each other in a cycle)",
            taskName: name)
    }

    /// A task or readiness set that names itself: the graph would call it a cycle too.
    static func dependsOnItself(_ name: String) -> LaunchError {
        LaunchError(.cycle, "dependencies form a loop: \(name) → \(name)", taskName: name)
    }

    static func unknownReadiness(_ name: String) -> LaunchError {
        LaunchError(.unknownReadiness, "no readiness set named '\(name)'")
    }

    static func launchFinished(adding name: String) -> LaunchError {
        LaunchError(.launchFinished, "cannot add '\(name)': the launch has ended", taskName: name)
    }

    static func launchEnded(before readiness: String, because outcome: RunOutcome) -> LaunchError {
        LaunchError(.launchEnded, "the launch ended before '\(readiness)' was ready: \(outcome)")
    }

    /// `parameter` as the API spells it: `retry backoff`, `retry maxBackoff`.
    static func negativeDuration(_ parameter: String, _ value: Duration, task: String) -> LaunchError {
        LaunchError(
            .negativeDuration, "task '\(task)' has a negative \(parameter) (\(value.shortDescription))", taskName: task)
    }

    /// A setting of the launcher itself, named as its initializer spells it.
    static func negativeDuration(_ parameter: String, _ value: Duration, launcher: String) -> LaunchError {
        LaunchError(.negativeDuration, "launcher '\(launcher)' has a negative \(parameter) (\(value.shortDescription))")
    }

    static func notStarted(_ launcher: String, waitingFor readiness: String, after timeout: Duration) -> LaunchError {
        LaunchError(
            .notStarted,
            "the wait for '\(readiness)' timed out after \(timeout.shortDescription): launcher '\(launcher)' has not been started"
        )
    }

    static func negativeTimeout(_ value: Duration, waitingFor readiness: String) -> LaunchError {
        LaunchError(
            .negativeDuration, "the wait for '\(readiness)' was given a negative timeout (\(value.shortDescription))")
    }

    /// The error a nested launcher's ``Launcher/undo()`` throws: names every undo that did
    /// not succeed. `package`: `LauncherService` throws it for the undos that failed.
    package static func undoFailed(_ undos: [UndoRecord], launcher: String) -> LaunchError {
        let culprits = undos.map { "'\($0.task)' \($0.outcome)" }.joined(separator: "; ")
        return LaunchError(
            .undoFailed, "shutdown of '\(launcher)': undo of \(culprits)", taskName: undos.first?.task,
            underlying: undos.lazy.compactMap(\.outcome.error).first, undoFailures: undos)
    }

    /// `package`: the service-lifecycle module reports a cancelled wait for the launch with it.
    package static func cancelled() -> LaunchError {
        LaunchError(.cancelled, "the launch was cancelled")
    }

    /// The launch's error for a graph error: a failed or timed-out required task keeps its name
    /// and the graph's message ("required task 'config' failed: …", "task 'config' timed out
    /// after …").
    static func from(_ error: GraphError) -> LaunchError {
        switch error.code {
        case .taskFailed, .timedOut:
            LaunchError(.taskFailed, error.message, taskName: error.taskID, underlying: error.underlyingError)
        case .duplicateID: duplicateName(error.taskID ?? "")
        case .emptyID: emptyName()
        case .runFinished: launchFinished(adding: error.taskID ?? "")
        case .cancelled: cancelled()
        case .cycle: LaunchError(.cycle, error.message, taskName: error.taskID)
        case .negativeDuration: LaunchError(.negativeDuration, error.message, taskName: error.taskID)
        case .invalidConfiguration: LaunchError(.invalidConfiguration, error.message, taskName: error.taskID)
        default: LaunchError(.unknownDependency, error.message, taskName: error.taskID)
        }
    }
}

/// What an app shows: `error.localizedDescription` is the message that names the culprit,
/// not Foundation's "The operation could not be completed".
extension LaunchError: LocalizedError {
    public var errorDescription: String? { message }
}

extension LaunchError: CodedError { package var codeName: String { "\(code)" } }
