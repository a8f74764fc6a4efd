/// How often a failed piece of work is tried again, and how long it waits in between: the one
/// retry vocabulary of Conductor — a graph task's `retry:`, a startup task's, and the schedule
/// of a request's `RequestRetryPolicy`.
///
/// Waits are measured on the clock of whatever runs the work, so a test drives them with a
/// manual clock. Each wait is the one before times `multiplier`, never more than `maxBackoff`.
///
/// ```swift
/// graph.add("config", options: TaskOptions(retry: .attempts(3, backoff: .milliseconds(200)))) { _ in try await loadConfig() }
/// // attempt 1, wait 200 ms, attempt 2, wait 400 ms, attempt 3
///
/// let patient = RetryPolicy.attempts(4, backoff: .milliseconds(100), multiplier: 3)
/// // waits 100 ms, 300 ms, 900 ms — for a task or a request alike:
/// try await gate.send(export, retry: .automatic(patient))
/// ```
public struct RetryPolicy: Hashable, Sendable {
    /// The total number of attempts, as given. Fewer than 1 is reported, naming whatever holds
    /// the policy, when it is validated: a graph task when the graph is validated, a startup
    /// task when it is added to a launcher, a request gate when it is created, a request when
    /// it is sent.
    public let maxAttempts: Int
    /// The wait before the second attempt.
    public let initialBackoff: Duration
    /// The factor each further wait is multiplied by, as given. Below 1 is reported like a
    /// count of no attempts, naming whatever holds the policy.
    public let multiplier: Int
    /// The longest wait.
    public let maxBackoff: Duration

    /// One attempt, no retry.
    public static let never = RetryPolicy(maxAttempts: 1, initialBackoff: .zero, multiplier: 1, maxBackoff: .zero)

    /// Up to `count` attempts with exponential backoff. `count` and `multiplier` are kept as
    /// given: either below 1 is not clamped but reported by validation, naming whatever holds
    /// it (a multiplier of 0 would retry at once after the first wait; it is a mistake to
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

    /// Whether the counts are out of range: no attempts at all, or a multiplier below 1 that
    /// would shrink the waits or make them zero.
    package var hasInvalidCount: Bool { maxAttempts < 1 || multiplier < 1 }

    /// The waits, as the Core kit's one retry schedule.
    package var retrySchedule: RetrySchedule {
        RetrySchedule(initial: initialBackoff, multiplier: multiplier, maximum: maxBackoff)
    }

    /// The wait after failed attempt number `attempt` (1-based).
    package func backoff(after attempt: Int) -> Duration {
        retrySchedule.delay(afterAttempt: attempt)
    }
}
