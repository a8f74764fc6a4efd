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

/// How often a failed task is tried again, and how long it waits in between.
///
/// Waits are measured on the run's clock, so a test drives them with a manual clock.
/// A timed-out attempt counts as a failed attempt. Cancellation is never retried.
///
/// ```swift
/// graph.add("config", options: TaskOptions(retry: .attempts(3, backoff: .milliseconds(200)))) { _ in try await loadConfig() }
/// // attempt 1, wait 200 ms, attempt 2, wait 400 ms, attempt 3
/// ```
public struct RetryPolicy: Hashable, Sendable {
    /// The total number of attempts, as given. Fewer than 1 is reported, with the task that
    /// holds the policy, when the task is validated (``GraphError/Code/invalidConfiguration``)
    /// or added to a launcher (``LaunchError/Code/invalidConfiguration``).
    public let maxAttempts: Int
    /// The wait before the second attempt.
    public let initialBackoff: Duration
    /// The factor each further wait is multiplied by, as given. Below 1 is reported like a
    /// count of no attempts (``GraphError/Code/invalidConfiguration``,
    /// ``LaunchError/Code/invalidConfiguration``), naming the task that holds the policy.
    public let multiplier: Int
    /// The longest wait.
    public let maxBackoff: Duration

    /// One attempt, no retry.
    public static let never = RetryPolicy(maxAttempts: 1, initialBackoff: .zero, multiplier: 1, maxBackoff: .zero)

    /// Up to `count` attempts with exponential backoff. `count` and `multiplier` are kept as
    /// given: either below 1 is not clamped but reported by validation, naming the task that
    /// holds it (a multiplier of 0 would retry at once after the first wait; it is a mistake to
    /// report, not a value to guess at).
    public static func attempts(
        _ count: Int,
        backoff initial: Duration = .milliseconds(100),
        multiplier: Int = 2,
        maxBackoff: Duration = .seconds(30)
    ) -> RetryPolicy {
        RetryPolicy(
            maxAttempts: count, initialBackoff: initial, multiplier: multiplier, maxBackoff: maxBackoff)
    }

    /// The first negative wait, named as ``attempts(_:backoff:multiplier:maxBackoff:)`` spells it.
    /// Zero is fine: it means "try again at once".
    package var negativeBackoff: (parameter: String, value: Duration)? {
        if initialBackoff < .zero { return ("retry backoff", initialBackoff) }
        if maxBackoff < .zero { return ("retry maxBackoff", maxBackoff) }
        return nil
    }

    /// What validation reports about the policy's counts, naming the task that holds it: a
    /// policy of no attempts would end the task without running it, and a multiplier below 1
    /// would shrink the waits or make them zero.
    package func invalidCount(task: String) -> GraphError? {
        if maxAttempts < 1 { return .retryAttempts(maxAttempts, task: task) }
        if multiplier < 1 { return .retryMultiplier(multiplier, task: task) }
        return nil
    }

    /// Whether ``invalidCount(task:)`` has something to report, without building the error.
    var hasInvalidCount: Bool { maxAttempts < 1 || multiplier < 1 }

    /// The wait after failed attempt number `attempt` (1-based): the Core kit's one retry
    /// schedule, which the gate's retries use too.
    func backoff(after attempt: Int) -> Duration {
        RetrySchedule(initial: initialBackoff, multiplier: multiplier, maximum: maxBackoff)
            .delay(afterAttempt: attempt)
    }
}
