/// Independent tasks grouped into named stages that run one after another, with named
/// milestones between them, compiled to a ``TaskGraph``.
///
/// Tasks inside a stage run concurrently; a stage starts once every task of the stage
/// before it has ended (an optional task's failure does not hold the next stage back; a
/// required task's failure ends the run). A milestone is reached once everything before it
/// has ended.
///
/// ```swift
/// let schedule = Schedule {
///     Stage("basics") {
///         Step("basicInfo") { _ in try await api.basicInfo() }
///     }
///     Stage("sale") {
///         Step("saleInfo") { _ in try await api.saleInfo() }
///         Step("skuInfo") { _ in try await api.sku() }
///     }
///     Milestone("firstScreen")
///     Stage("shipping") {
///         Step("freight", options: TaskOptions(failure: .optional)) { _ in try await api.freight() }
///         Step("logistics", options: TaskOptions(failure: .optional)) { _ in try await api.logistics() }
///     }
///     Milestone("fullPage")
/// }
/// let run = try schedule.start()
/// try await run.reached("firstScreen")
/// ```
///
/// Each stage boundary is one node, so stages of any width cost O(tasks), not O(width²).
public struct Schedule: Sendable {
    /// The graph the schedule compiles to; add tasks to it or start it directly.
    public var graph: TaskGraph

    /// Builds a schedule from stages and milestones, in order.
    public init(@ScheduleBuilder _ elements: () -> [ScheduleElement]) {
        var graph = TaskGraph()
        var frontier: [String] = []
        for (index, element) in elements().enumerated() {
            switch element.kind {
            case .milestone(let name):
                graph.append(
                    NodeDefinition(
                        id: name, requires: [], after: frontier, kind: .marker(milestone: name, startsStage: nil),
                        stage: nil, isHidden: false)
                )
                frontier = [name]
            case .stage(let name, let steps):
                let marker = "\u{1}stage \(index) \(name)"
                graph.append(
                    NodeDefinition(
                        id: marker, requires: [], after: frontier, kind: .marker(milestone: nil, startsStage: name),
                        stage: name, isHidden: true, stageIndex: index)
                )
                for step in steps {
                    graph.note(step.dependencies, of: step.id)
                    graph.append(
                        NodeDefinition(
                            id: step.id, requires: step.dependencies.names, after: [marker], kind: .task(step.spec),
                            stage: name, isHidden: false, stageIndex: index)
                    )
                }
                frontier = steps.isEmpty ? [marker] : steps.map(\.id)
            }
        }
        self.graph = graph
    }

    /// Checks ids and dependencies without running anything.
    public func validate() throws(GraphError) { try graph.validate() }

    /// Starts the schedule; see ``TaskGraph/start(concurrencyLimit:clock:telemetry:staysOpen:)``.
    public func start(
        concurrencyLimit: Int? = nil,
        clock: some Clock<Duration> = ContinuousClock(),
        telemetry: Telemetry = .bootstrapped,
        staysOpen: Bool = false
    ) throws(GraphError) -> GraphRun {
        try graph.start(concurrencyLimit: concurrencyLimit, clock: clock, telemetry: telemetry, staysOpen: staysOpen)
    }

    /// Runs the schedule in the current task; see ``TaskGraph/run(concurrencyLimit:clock:telemetry:)``.
    public func run(
        concurrencyLimit: Int? = nil,
        clock: some Clock<Duration> = ContinuousClock(),
        telemetry: Telemetry = .bootstrapped
    ) async throws(GraphError) -> RunReport {
        try await graph.run(concurrencyLimit: concurrencyLimit, clock: clock, telemetry: telemetry)
    }
}

/// A stage or a milestone of a ``Schedule``, as the builder collects them. You never make
/// one yourself: write ``Stage`` and ``Milestone`` inside the builder.
///
/// ```swift
/// Schedule {
///     Stage("basics") { Step("basicInfo") { _ in } }   // → a ScheduleElement
///     Milestone("firstScreen")                          // → a ScheduleElement
/// }
/// ```
public struct ScheduleElement: Sendable {
    enum Kind: Sendable {
        case stage(String, [Step])
        case milestone(String)
    }

    let kind: Kind
}

/// A named group of steps that run concurrently, after every step of the previous stage
/// has ended.
///
/// ```swift
/// Stage("sale") {
///     Step("saleInfo") { _ in try await api.saleInfo() }
///     Step("skuInfo") { _ in try await api.sku() }
/// }
/// ```
public struct Stage: Sendable {
    let name: String
    let steps: [Step]

    public init(_ name: String, @StageBuilder _ steps: () -> [Step]) {
        self.name = name
        self.steps = steps()
    }
}

/// A named point between stages, reached once everything before it has ended.
///
/// ```swift
/// Milestone("firstScreen")
/// ```
public struct Milestone: Sendable {
    let name: String

    public init(_ name: String) { self.name = name }
}

/// One task of a ``Stage``, with the same ``TaskOptions`` as ``TaskGraph/add(_:dependsOn:options:_:)``.
///
/// ```swift
/// Step("freight", options: TaskOptions(timeout: .seconds(2), failure: .optional)) { _ in try await api.freight() }
/// ```
public struct Step: Sendable {
    let id: String
    let dependencies: TaskDependencies
    let spec: TaskSpec

    /// A step; `dependsOn` may name steps of this or earlier stages whose success it needs.
    /// A step of a later stage cannot have run yet: validation reports
    /// ``GraphError/Code/laterStage``.
    public init<Result: Sendable>(
        _ id: String,
        dependsOn dependencies: TaskDependencies = .independent,
        options: TaskOptions = TaskOptions(),
        _ operation: @escaping @Sendable (TaskContext) async throws -> Result
    ) {
        self.init(
            id, dependencies,
            TaskSpec.make(
                operation: .global { context in try await operation(context) }, options: options,
                returnsVoid: Result.self == Void.self))
    }

    /// The same step for an operation that returns nothing: the closure is kept as it is, and a
    /// worker calls it directly, without the generic initializer's wrapper. Chosen by the
    /// compiler for such closures; nothing to write differently.
    @_documentation(visibility: internal)
    public init(
        _ id: String,
        dependsOn dependencies: TaskDependencies = .independent,
        options: TaskOptions = TaskOptions(),
        _ operation: @escaping @Sendable (TaskContext) async throws -> Void
    ) {
        self.init(
            id, dependencies, TaskSpec.make(operation: .globalVoid(operation), options: options, returnsVoid: true))
    }

    private init(_ id: String, _ dependencies: TaskDependencies, _ spec: TaskSpec) {
        self.id = id
        self.dependencies = dependencies
        self.spec = spec
    }
}

/// Builds the stages and milestones of a ``Schedule``; `if` and `for` work as usual.
///
/// ```swift
/// Schedule {
///     for region in regions { Stage(region) { Step("stock-\(region)") { _ in } } }
///     if showsAds { Milestone("beforeAds") }
/// }
/// ```
@resultBuilder
public enum ScheduleBuilder {
    public static func buildExpression(_ stage: Stage) -> [ScheduleElement] {
        [ScheduleElement(kind: .stage(stage.name, stage.steps))]
    }
    public static func buildExpression(_ milestone: Milestone) -> [ScheduleElement] {
        [ScheduleElement(kind: .milestone(milestone.name))]
    }
    public static func buildBlock(_ parts: [ScheduleElement]...) -> [ScheduleElement] { parts.flatMap { $0 } }
    public static func buildOptional(_ part: [ScheduleElement]?) -> [ScheduleElement] { part ?? [] }
    public static func buildEither(first: [ScheduleElement]) -> [ScheduleElement] { first }
    public static func buildEither(second: [ScheduleElement]) -> [ScheduleElement] { second }
    public static func buildArray(_ parts: [[ScheduleElement]]) -> [ScheduleElement] { parts.flatMap { $0 } }
}

/// Builds the steps of a ``Stage``; `if` and `for` work as usual.
///
/// ```swift
/// Stage("media") {
///     for image in images { Step("image-\(image)") { _ in try await load(image) } }
/// }
/// ```
@resultBuilder
public enum StageBuilder {
    public static func buildExpression(_ step: Step) -> [Step] { [step] }
    public static func buildBlock(_ parts: [Step]...) -> [Step] { parts.flatMap { $0 } }
    public static func buildOptional(_ part: [Step]?) -> [Step] { part ?? [] }
    public static func buildEither(first: [Step]) -> [Step] { first }
    public static func buildEither(second: [Step]) -> [Step] { second }
    public static func buildArray(_ parts: [[Step]]) -> [Step] { parts.flatMap { $0 } }
}
