/// What a node of a graph is: a task to run, or a marker (milestone or stage boundary)
/// that is reached as soon as everything before it has ended.
///
/// 32 bytes: a graph holds one per node (and its runs share that array), so a plain task's
/// definition is its id, its dependencies and its settings, and everything else — a marker's
/// names, the list of what must merely have ended, a step's stage, a subtask's parent, whether
/// the node is hidden — is boxed with the settings in one reference (``Described``) rather than
/// stored inline.
package struct NodeDefinition: Sendable {
    package enum Kind: Sendable {
        case task(TaskSpec)
        case marker(milestone: String?, startsStage: String?)
    }

    /// A plain task's settings alone, or a box with everything a node can have: one reference
    /// either way (an enum of two class references takes no more room than one).
    private enum Payload: Sendable {
        case task(TaskSpec)
        case described(Described)
    }

    /// A marker, or a task with what most tasks lack: dependencies that must merely have
    /// ended, a schedule step's or stage marker's stage, a subtask's parent, being hidden.
    private final class Described: Sendable {
        /// The task's settings; nil for a marker.
        let spec: TaskSpec?
        let milestone: String?
        let startsStage: String?
        let after: [String]
        let stage: String?
        let stageIndex: Int?
        let parent: String?
        let isHidden: Bool

        init(
            kind: Kind, after: [String], stage: String?, stageIndex: Int?, parent: String?, isHidden: Bool
        ) {
            switch kind {
            case .task(let spec):
                self.spec = spec
                milestone = nil
                startsStage = nil
            case .marker(let milestone, let startsStage):
                spec = nil
                self.milestone = milestone
                self.startsStage = startsStage
            }
            self.after = after
            self.stage = stage
            self.stageIndex = stageIndex
            self.parent = parent
            self.isHidden = isHidden
        }
    }

    package var id: String
    /// Dependencies whose success this node needs.
    var requires: [String]
    private var payload: Payload

    package init(
        id: String, requires: [String], after: [String], kind: Kind, stage: String?, isHidden: Bool,
        stageIndex: Int? = nil, parent: String? = nil
    ) {
        self.id = id
        self.requires = requires
        payload = Self.payload(
            kind: kind, after: after, stage: stage, stageIndex: stageIndex, parent: parent, isHidden: isHidden)
    }

    private static func payload(
        kind: Kind, after: [String], stage: String?, stageIndex: Int?, parent: String?, isHidden: Bool
    ) -> Payload {
        if case .task(let spec) = kind, after.isEmpty, stage == nil, stageIndex == nil, parent == nil, !isHidden {
            return .task(spec)
        }
        return .described(
            Described(
                kind: kind, after: after, stage: stage, stageIndex: stageIndex, parent: parent, isHidden: isHidden))
    }

    /// The box, for a node that has one.
    private var described: Described? {
        if case .described(let described) = payload { return described }
        return nil
    }

    /// Dependencies that must merely have ended (stage order, milestones).
    var after: [String] {
        get { described?.after ?? [] }
        set {
            payload = Self.payload(
                kind: kind, after: newValue, stage: stage, stageIndex: stageIndex, parent: parent, isHidden: isHidden)
        }
    }

    /// Markers of a schedule have internal ids that never appear in reports or errors.
    var isHidden: Bool { described?.isHidden ?? false }

    var kind: Kind {
        switch payload {
        case .task(let spec): .task(spec)
        case .described(let described):
            if let spec = described.spec {
                .task(spec)
            } else {
                .marker(milestone: described.milestone, startsStage: described.startsStage)
            }
        }
    }

    /// The task's settings; nil for a marker.
    var spec: TaskSpec? {
        switch payload {
        case .task(let spec): spec
        case .described(let described): described.spec
        }
    }

    /// The task's settings, unretained; nil for a marker. For a caller that holds the
    /// definition for as long as it uses the spec: building a run reads every node's settings,
    /// and a retain and release per node cost more than the reading.
    var unretainedSpec: Unmanaged<TaskSpec>? {
        switch payload {
        case .task(let spec): Unmanaged.passUnretained(spec)
        case .described(let described): described.spec.map(Unmanaged.passUnretained)
        }
    }

    var stage: String? { described?.stage }

    /// The task whose body added this one as a subtask.
    var parent: String? { described?.parent }

    /// This task, as a subtask of `parent`.
    func withParent(_ parent: String) -> NodeDefinition {
        NodeDefinition(
            id: id, requires: requires, after: after, kind: kind, stage: stage, isHidden: isHidden,
            stageIndex: stageIndex, parent: parent)
    }

    /// The position of a schedule's stage, so validation can tell a dependency on a later
    /// stage (which the stage barriers would turn into a cycle) from one on an earlier stage.
    var stageIndex: Int? { described?.stageIndex }

    var isTask: Bool {
        switch payload {
        case .task: true
        case .described(let described): described.spec != nil
        }
    }
}

/// How to run one task. A class, so the many places that hand a task around (the graph, its
/// runs, each assignment to a worker) share one copy instead of copying every field through
/// generic value witnesses.
///
/// Unchecked, and safe: every stored property is a `let` of a `Sendable` type, and so is the
/// one of its only subclass (``WithRare``, private); a class that is not final cannot state
/// that to the compiler.
package class TaskSpec: @unchecked Sendable {
    package enum Operation: Sendable {
        case global(@Sendable (TaskContext) async throws -> any Sendable)
        /// The user's own closure, unwrapped: most tasks return nothing, and a worker calls
        /// this one without the generic wrapper's async frame and its boxed `Void` result.
        case globalVoid(@Sendable (TaskContext) async throws -> Void)
        case mainActor(@MainActor @Sendable (TaskContext) async throws -> any Sendable)
    }

    /// A timeout, a retry policy or limits, which most tasks do not have: boxed, and held only
    /// by the subclass of a spec that has them.
    private final class Rare: Sendable {
        let timeout: Duration?
        /// `timeout` in nanoseconds, read once: a deadline is set on every start, and a
        /// `Duration`'s conversion costs ~190 instructions.
        let timeoutNanoseconds: Int64
        let retry: RetryPolicy
        /// Without duplicates, in the order the limits were made: the order places are taken.
        let limits: [TaskLimit]

        init(timeout: Duration?, retry: RetryPolicy, limits: [TaskLimit]) {
            self.timeout = timeout
            self.timeoutNanoseconds = timeout?.nanoseconds ?? 0
            self.retry = retry
            self.limits = Array(Set(limits)).sorted { $0.order < $1.order }
        }
    }

    /// A spec with a timeout, a retry policy or limits: the only subclass, so a plain spec
    /// has no field for them at all.
    private final class WithRare: TaskSpec {
        let settings: Rare

        init(_ settings: Rare, operation: Operation, options: TaskOptions, runsInOwnTask: Bool?, returnsVoid: Bool) {
            self.settings = settings
            super.init(
                operation: operation, options: options, runsInOwnTask: runsInOwnTask, returnsVoid: returnsVoid,
                hasRare: true)
        }
    }

    /// The yes-or-no settings, packed: with them in one byte, a plain spec is 40 bytes, which
    /// malloc serves from a 48-byte chunk rather than a 64-byte one (a graph holds one per task).
    private struct Bits: OptionSet {
        let rawValue: UInt8
        static let runsInOwnTask = Bits(rawValue: 1 << 0)
        static let isPlain = Bits(rawValue: 1 << 1)
        static let needsAdmission = Bits(rawValue: 1 << 2)
        static let returnsVoid = Bits(rawValue: 1 << 3)
        /// This is a ``WithRare``.
        static let hasRare = Bits(rawValue: 1 << 4)
    }

    final let operation: Operation
    /// `priority.rawValue`, read once: `TaskPriority` is resilient outside Apple platforms,
    /// so comparing or copying one on the hot path goes through the runtime.
    final let priorityRank: UInt8
    final let failure: FailurePolicy
    final let whenDependencyFails: DependencyFailureBehavior
    private final let bits: Bits
    /// Which case `operation` is, as a trivial value: a worker switches on it and calls the
    /// body through ``callVoid(_:)`` or ``call(_:)``, so the closure is used where this spec
    /// holds it instead of being copied out (a retain and a release a task).
    enum OperationKind { case global, globalVoid, mainActor }
    final let operationKind: OperationKind
    /// Last: a resilient type's size is known only at run time, so every stored property
    /// after it would be found through an offset read from the class's metadata.
    final let priority: TaskPriority

    private final var rare: Rare? {
        // Set only by `WithRare`'s initializer.
        bits.contains(.hasRare) ? unsafeDowncast(self, to: WithRare.self).settings : nil
    }
    var timeout: Duration? { rare?.timeout }
    var timeoutNanoseconds: Int64 { rare?.timeoutNanoseconds ?? 0 }
    var retry: RetryPolicy { rare?.retry ?? .never }
    var limits: [TaskLimit] { rare?.limits ?? [] }
    /// Run the operation in a task of its own (made with `Task {}`, never detached: it copies
    /// the worker's task-local values), so a timeout or a removal can abandon it at once
    /// instead of waiting for it to notice cancellation.
    var runsInOwnTask: Bool { bits.contains(.runsInOwnTask) }
    /// No retry, not on the main actor, not in a task of its own: a worker calls the body
    /// directly (under a deadline if it has a timeout, ``hasDeadlineOnWorker``).
    var isPlain: Bool { bits.contains(.isPlain) }

    /// A timeout, and a body its worker calls directly: the run's ``GraphDeadlines`` end the
    /// task at its deadline and let the worker go.
    var hasDeadlineOnWorker: Bool { timeout != nil && !runsInOwnTask }
    /// It names limits: it holds a place in each before it is ready (``GraphAdmissions``).
    var needsAdmission: Bool { bits.contains(.needsAdmission) }
    /// The operation returns `Void`: nothing to keep for dependents, so a run does not
    /// store it (``TaskContext/value(of:)`` still reads `()`).
    var returnsVoid: Bool { bits.contains(.returnsVoid) }

    /// The settings arrive as one ``TaskOptions`` and are kept apart: the priority last and
    /// read once as a rank, a timeout, a retry policy and limits in the subclass that has them
    /// (see ``Rare``), so a task costs the hot path what it did before options were one value.
    package static func make(
        operation: Operation,
        options: TaskOptions,
        runsInOwnTask: Bool? = nil,
        returnsVoid: Bool = false
    ) -> TaskSpec {
        guard options.timeout == nil, options.retry == .never, options.limits.isEmpty else {
            return WithRare(
                Rare(timeout: options.timeout, retry: options.retry, limits: options.limits), operation: operation,
                options: options, runsInOwnTask: runsInOwnTask, returnsVoid: returnsVoid)
        }
        return TaskSpec(
            operation: operation, options: options, runsInOwnTask: runsInOwnTask, returnsVoid: returnsVoid,
            hasRare: false)
    }

    private init(
        operation: Operation, options: TaskOptions, runsInOwnTask: Bool?, returnsVoid: Bool, hasRare: Bool
    ) {
        self.operation = operation
        operationKind =
            switch operation {
            case .global: .global
            case .globalVoid: .globalVoid
            case .mainActor: .mainActor
            }
        let timeout = options.timeout
        let retry = options.retry
        self.priority = options.priority
        self.priorityRank = options.priority.rawValue
        let limits = options.limits
        self.failure = options.failure
        self.whenDependencyFails = options.whenDependencyFails
        var bits: Bits = hasRare ? .hasRare : []
        if returnsVoid { bits.insert(.returnsVoid) }
        if !limits.isEmpty { bits.insert(.needsAdmission) }
        // A timeout alone: the body runs on its worker, under a deadline of the run's
        // (``GraphDeadlines``); with retries, on the main actor or with limits, in a task of its own.
        let ownTask =
            runsInOwnTask ?? (timeout != nil && (retry.maxAttempts > 1 || operation.isMainActor || !limits.isEmpty))
        if ownTask { bits.insert(.runsInOwnTask) }
        if !operation.isMainActor, !ownTask, retry.maxAttempts <= 1 { bits.insert(.isPlain) }
        self.bits = bits
    }

    /// What validation reports about the task's own settings, naming it; see
    /// ``TaskOptions/invalidSetting(timeout:retry:of:)``.
    func invalidSetting(of task: String) -> GraphError? {
        // Only a timeout, a retry policy or limits can be invalid, and they are all in `rare`.
        guard rare != nil else { return nil }
        if let limit = limits.first(where: { $0.capacity < 1 }) { return .limitCapacity(limit, task: task) }
        return TaskOptions.invalidSetting(timeout: timeout, retry: retry, of: task)
    }

    /// Whether ``invalidSetting(of:)`` has something to report, without building the error.
    var hasInvalidSetting: Bool {
        rare != nil
            && (TaskOptions.hasInvalidSetting(timeout: timeout, retry: retry) || limits.contains { $0.capacity < 1 })
    }

    var placement: String {
        operation.isMainActor ? "main actor" : "global"
    }

    /// Calls a `globalVoid` operation (``operationKind``) with `context`.
    func callVoid(_ context: TaskContext) async throws {
        guard case .globalVoid(let body) = operation else { preconditionFailure("not a Void operation") }
        try await body(context)
    }

    /// Calls a `global` or `mainActor` operation with `context`.
    func call(_ context: TaskContext) async throws -> any Sendable {
        switch operation {
        case .global(let body): try await body(context)
        case .mainActor(let body): try await Self.callOnMainActor(body, context)
        case .globalVoid(let body): try await body(context)
        }
    }

    /// A main-actor body, called once the hop to the main actor is made: the hop can take
    /// long — the main actor may be busy, even with the very code that stops the run — so a
    /// run that stopped meanwhile does not see the body begin (it ends cancelled).
    @MainActor
    private static func callOnMainActor(
        _ body: @MainActor @Sendable (TaskContext) async throws -> any Sendable, _ context: TaskContext
    ) async throws -> any Sendable {
        guard context.storage.isRunning else { throw CancellationError() }
        return try await body(context)
    }
}

extension TaskSpec.Operation {
    var isMainActor: Bool {
        if case .mainActor = self { return true }
        return false
    }
}
