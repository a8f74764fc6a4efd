/// What a task's failure means for the run.
///
/// ```swift
/// graph.add("recommendations", failure: .optional) { _ in try await api.recommendations() }
/// ```
public struct FailurePolicy: Hashable, Sendable, CustomStringConvertible {
    private enum Kind: Hashable, Sendable { case required, optional }
    private let kind: Kind

    /// The task's failure ends the run: running tasks are cancelled, pending ones end as cancelled.
    public static let required = FailurePolicy(kind: .required)
    /// The task's failure is recorded; tasks that need its result are skipped, unless they
    /// declared that they can do without it.
    public static let optional = FailurePolicy(kind: .optional)

    var isRequired: Bool { kind == .required }

    public var description: String { kind == .required ? "required" : "optional" }
}

/// What a task does when a dependency it requires did not succeed (failed, timed out, was
/// skipped or removed). Only optional dependencies can fail without ending the run.
///
/// ```swift
/// graph.add("page", dependsOn: ["comments"], whenDependencyFails: .runAnyway) { context in
///     let comments = try? context.value(of: commentsHandle)   // nil if it failed
///     …
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
/// graph.add("config", retry: .attempts(3, backoff: .milliseconds(200))) { _ in try await loadConfig() }
/// // attempt 1, wait 200 ms, attempt 2, wait 400 ms, attempt 3
/// ```
public struct RetryPolicy: Hashable, Sendable {
    /// The total number of attempts, as given. Fewer than 1 is reported, with the task that
    /// holds the policy, when the task is validated (``GraphError/Code/invalidConfiguration``)
    /// or added to a launcher (``LaunchError/Code/invalidConfiguration``).
    public let maxAttempts: Int
    /// The wait before the second attempt.
    public let initialBackoff: Duration
    /// The factor each further wait is multiplied by.
    public let multiplier: Int
    /// The longest wait.
    public let maxBackoff: Duration

    /// One attempt, no retry.
    public static let never = RetryPolicy(maxAttempts: 1, initialBackoff: .zero, multiplier: 1, maxBackoff: .zero)

    /// Up to `count` attempts with exponential backoff. `count` is kept as given: a count
    /// below 1 is not clamped but reported by validation, naming the task that holds it.
    public static func attempts(
        _ count: Int,
        backoff initial: Duration = .milliseconds(100),
        multiplier: Int = 2,
        maxBackoff: Duration = .seconds(30)
    ) -> RetryPolicy {
        RetryPolicy(
            maxAttempts: count, initialBackoff: initial, multiplier: max(1, multiplier), maxBackoff: maxBackoff)
    }

    /// The first negative wait, named as ``attempts(_:backoff:multiplier:maxBackoff:)`` spells it.
    /// Zero is fine: it means "try again at once".
    var negativeBackoff: (parameter: String, value: Duration)? {
        if initialBackoff < .zero { return ("retry backoff", initialBackoff) }
        if maxBackoff < .zero { return ("retry maxBackoff", maxBackoff) }
        return nil
    }

    /// The wait after failed attempt number `attempt` (1-based).
    func backoff(after attempt: Int) -> Duration {
        var delay = initialBackoff
        for _ in 1..<max(1, attempt) {
            delay *= multiplier
            if delay >= maxBackoff { return maxBackoff }
        }
        return min(delay, maxBackoff)
    }
}
