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

    var isTask: Bool {
        if case .task = kind { return true }
        return false
    }
}

/// How to run one task.
struct TaskSpec: Sendable {
    enum Operation: Sendable {
        case global(@Sendable (TaskContext) async throws -> any Sendable)
        case mainActor(@MainActor @Sendable (TaskContext) async throws -> any Sendable)
    }

    var operation: Operation
    var priority: TaskPriority
    var timeout: Duration?
    var retry: RetryPolicy
    var failure: FailurePolicy
    var whenDependencyFails: DependencyFailureBehavior
    /// Run the operation in a task of its own, so a timeout or a removal can abandon it at
    /// once instead of waiting for it to notice cancellation.
    var runsDetached: Bool

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
        self.timeout = timeout
        self.retry = retry
        self.failure = failure
        self.whenDependencyFails = whenDependencyFails
        self.runsDetached = runsDetached ?? (timeout != nil)
    }

    var placement: String {
        if case .mainActor = operation { return "main actor" }
        return "global"
    }
}
