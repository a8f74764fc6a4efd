/// What a node of a graph is: a task to run, or a marker (milestone or stage boundary)
/// that is reached as soon as everything before it has ended.
struct NodeDefinition: Sendable {
    enum Kind: Sendable {
        case task(TaskSpec)
        case marker(milestone: String?, startsStage: String?)
    }

    var id: String
    /// Dependencies whose success this node needs.
    var requires: [String]
    /// Dependencies that must merely have ended (stage order, milestones).
    var after: [String]
    var kind: Kind
    var stage: String?
    /// Markers of a schedule have internal ids that never appear in reports or errors.
    var isHidden: Bool
    /// The position of a schedule's stage, so validation can tell a dependency on a later
    /// stage (which the stage barriers would turn into a cycle) from one on an earlier stage.
    var stageIndex: Int? = nil

    var isTask: Bool {
        if case .task = kind { return true }
        return false
    }
}

/// How to run one task. A class, so the many places that hand a task around (the graph, its
/// runs, each assignment to a worker) share one copy instead of copying every field through
/// generic value witnesses.
final class TaskSpec: Sendable {
    enum Operation: Sendable {
        case global(@Sendable (TaskContext) async throws -> any Sendable)
        case mainActor(@MainActor @Sendable (TaskContext) async throws -> any Sendable)
    }

    let operation: Operation
    let priority: TaskPriority
    /// `priority.rawValue`, read once: `TaskPriority` is resilient outside Apple platforms,
    /// so comparing or copying one on the hot path goes through the runtime.
    let priorityRank: UInt8
    let timeout: Duration?
    let retry: RetryPolicy
    let failure: FailurePolicy
    let whenDependencyFails: DependencyFailureBehavior
    /// Run the operation in a task of its own, so a timeout or a removal can abandon it at
    /// once instead of waiting for it to notice cancellation.
    let runsDetached: Bool
    /// No timeout, no retry, not on the main actor: a worker calls the body directly.
    let isPlain: Bool

    init(
        operation: Operation,
        priority: TaskPriority,
        timeout: Duration?,
        retry: RetryPolicy,
        failure: FailurePolicy,
        whenDependencyFails: DependencyFailureBehavior,
        runsDetached: Bool? = nil
    ) {
        self.operation = operation
        self.priority = priority
        self.priorityRank = priority.rawValue
        self.timeout = timeout
        self.retry = retry
        self.failure = failure
        self.whenDependencyFails = whenDependencyFails
        self.runsDetached = runsDetached ?? (timeout != nil)
        if case .global = operation, !self.runsDetached, retry.maxAttempts <= 1 {
            isPlain = true
        } else {
            isPlain = false
        }
    }

    /// The first negative duration, named as the API spells it; validation rejects it,
    /// where it would otherwise fail the task at run time. A zero timeout is allowed (the
    /// attempt times out at once, like a harmonizer's).
    var negativeDuration: (parameter: String, value: Duration)? {
        if let timeout, timeout < .zero { return ("timeout", timeout) }
        return retry.negativeBackoff
    }

    var placement: String {
        if case .mainActor = operation { return "main actor" }
        return "global"
    }
}
