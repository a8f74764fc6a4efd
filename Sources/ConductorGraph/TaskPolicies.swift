/// What a task's failure means for the run.
///
/// ```swift
/// graph.add("recommendations", options: TaskOptions(failure: .optional)) { _ in try await api.recommendations() }
/// ```
public struct FailurePolicy: Hashable, Sendable, CustomStringConvertible {
    private enum Kind: Hashable, Sendable { case required, optional }
    private let kind: Kind

    /// The task must succeed: if it fails, times out, or is skipped because a dependency did
    /// not succeed, the run ends as failed — running tasks are cancelled, pending ones end as
    /// cancelled. Removing it (``GraphRun/remove(_:)``, ``Launcher/remove(_:)``) is no failure.
    public static let required = FailurePolicy(kind: .required)
    /// The task's failure is recorded; tasks that need its result are skipped, unless they
    /// declared that they can do without it.
    public static let optional = FailurePolicy(kind: .optional)

    var isRequired: Bool { kind == .required }

    public var description: String { kind == .required ? "required" : "optional" }
}

/// What a task does when a dependency it requires did not succeed (failed, timed out, was
/// skipped or removed). Only optional dependencies can fail without ending the run, and a
/// required task skipped for such a failure ends it too: give a task that may be skipped the
/// ``FailurePolicy/optional`` policy, or let it run anyway.
///
/// ```swift
/// graph.add("page", dependsOn: ["comments"], options: TaskOptions(whenDependencyFails: .runAnyway)) { context in
///     let comments = try? context.value(of: commentsHandle)   // nil if it failed
///     return comments ?? []
/// }
/// ```
public struct DependencyFailureBehavior: Hashable, Sendable {
    private enum Kind: Hashable, Sendable { case skip, runAnyway }
    private let kind: Kind

    /// End as skipped, naming the dependency; the skip spreads to the task's own dependents.
    public static let skip = DependencyFailureBehavior(kind: .skip)
    /// Run anyway; reading the missing result throws ``GraphError/Code/resultUnavailable``.
    public static let runAnyway = DependencyFailureBehavior(kind: .runAnyway)

    var runsAnyway: Bool { kind == .runAnyway }
}
