/// A graph of named asynchronous tasks with dependencies, checked before it runs.
///
/// A task starts when every task it depends on has succeeded, and can read their typed
/// results. Ready tasks run concurrently, ordered by priority when a concurrency limit holds
/// them back. Each task has ``TaskOptions`` of its own: a timeout, a retry policy, a failure
/// policy.
///
/// ```swift
/// var graph = TaskGraph()
/// let info = graph.add("basicInfo") { _ in try await api.basicInfo() }
/// graph.add("sku", dependsOn: ["basicInfo"], options: TaskOptions(timeout: .seconds(2))) { context in
///     try await api.sku(for: context.value(of: info).productID)
/// }
/// graph.add("comments", options: TaskOptions(retry: .attempts(3), failure: .optional)) { _ in
///     try await api.comments()
/// }
/// graph.addMilestone("firstScreen", after: ["basicInfo", "sku"])
///
/// let report = try await graph.run()
/// ```
///
/// A graph is a value: each ``run(concurrencyLimit:clock:telemetry:)`` and each
/// ``start(concurrencyLimit:clock:telemetry:staysOpen:)`` is a new, independent run of its tasks, so one
/// graph can run many times, even at once (unlike a ``Launcher``, which launches once).
///
/// Validation (``validate()``, and every way of starting) rejects an empty or duplicate id,
/// a negative timeout or retry backoff, a retry policy of fewer than 1 attempt or with a
/// multiplier below 1, a task added ``TaskDependencies/inOrderOfAddition``, a dependency on an
/// unknown id, and a cycle, with a ``GraphError`` that names the culprit; starting also
/// rejects a `concurrencyLimit` below 1. Nothing starts, and nothing is clamped. A zero
/// timeout is allowed: every attempt times out at once.
///
/// - Complexity: validation is O(V + E); running costs one short lock per task.
public struct TaskGraph: Sendable {
    private(set) var definitions: [NodeDefinition] = []
    /// Kept up to date as tasks are added, so a graph built in dependency order is checked
    /// for free and starts without hashing its ids again.
    private var compiled = CompiledGraph()
    /// Tasks added with ``TaskDependencies/inOrderOfAddition``, which validation reports;
    /// almost always empty.
    private var tasksInOrderOfAddition: [String] = []

    /// An empty graph.
    public init() {}

    /// The ids of the tasks and milestones, in the order they were added.
    public var ids: [String] { definitions.filter { !$0.isHidden }.map(\.id) }

    /// Adds a task.
    ///
    /// ```swift
    /// let patient = TaskOptions(timeout: .seconds(2), retry: .attempts(3))
    /// graph.add("sku", dependsOn: ["basicInfo"], options: patient) { context in
    ///     try await api.sku(for: context.value(of: basicInfo).productID)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - id: A unique, non-empty name.
    ///   - dependencies: Tasks and milestones that must succeed (or be reached) before this one
    ///     starts; ``TaskDependencies/independent`` by default. A graph has no order of
    ///     addition: ``TaskDependencies/inOrderOfAddition`` is reported by validation
    ///     (``GraphError/Code/invalidConfiguration``).
    ///   - options: Priority, timeout, retry, failure policy and what to do when a dependency
    ///     fails; see ``TaskOptions``. A negative duration
    ///     (``GraphError/Code/negativeDuration``), or a retry policy of fewer than 1 attempt or
    ///     with a multiplier below 1 (``GraphError/Code/invalidConfiguration``), is reported by
    ///     validation.
    ///   - operation: The work. Its result can be read by dependents through the handle.
    @discardableResult
    public mutating func add<Result: Sendable>(
        _ id: String,
        dependsOn dependencies: TaskDependencies = .independent,
        options: TaskOptions = TaskOptions(),
        _ operation: @escaping @Sendable (TaskContext) async throws -> Result
    ) -> TaskHandle<Result> {
        let step = Step(id, dependsOn: dependencies, options: options, operation)
        return append(id: step.id, dependencies: step.dependencies, spec: step.spec)
    }

    /// ``add(_:dependsOn:options:_:)`` for an operation that returns nothing, which a worker
    /// calls directly, without the generic method's wrapper. Chosen by the compiler for such
    /// closures; nothing to write differently.
    @_documentation(visibility: internal)
    @discardableResult
    public mutating func add(
        _ id: String,
        dependsOn dependencies: TaskDependencies = .independent,
        options: TaskOptions = TaskOptions(),
        _ operation: @escaping @Sendable (TaskContext) async throws -> Void
    ) -> TaskHandle<Void> {
        let step = Step(id, dependsOn: dependencies, options: options, operation)
        return append(id: step.id, dependencies: step.dependencies, spec: step.spec)
    }

    /// Adds a task that runs on the main actor, for UI work; see ``add(_:dependsOn:options:_:)``.
    @discardableResult
    public mutating func addOnMainActor<Result: Sendable>(
        _ id: String,
        dependsOn dependencies: TaskDependencies = .independent,
        options: TaskOptions = TaskOptions(),
        _ operation: @escaping @MainActor @Sendable (TaskContext) async throws -> Result
    ) -> TaskHandle<Result> {
        append(
            id: id,
            dependencies: dependencies,
            spec: TaskSpec.make(
                operation: .mainActor { context in try await operation(context) },
                options: options,
                returnsVoid: Result.self == Void.self
            )
        )
    }

    /// Adds a milestone: reached once every listed task has ended (whatever its outcome),
    /// provided the run is still going. Observe it with ``GraphRun/reached(_:)`` or the
    /// ``GraphEvent/milestoneReached(_:at:)`` event. Tasks may depend on a milestone.
    public mutating func addMilestone(_ name: String, after ids: [String]) {
        append(
            NodeDefinition(
                id: name, requires: [], after: ids, kind: .marker(milestone: name, startsStage: nil),
                stage: nil, isHidden: false)
        )
    }

    /// Removes a task or milestone that has been added; dependents that name it will fail
    /// validation. Returns whether it was there.
    ///
    /// Removing a step of a ``Schedule`` keeps the stage order: the next stage waits for
    /// what the step waited for instead.
    @discardableResult
    public mutating func remove(_ id: String) -> Bool {
        guard let index = definitions.firstIndex(where: { $0.id == id && !$0.isHidden }) else { return false }
        let removed = definitions.remove(at: index)
        tasksInOrderOfAddition.removeAll { $0 == id }
        // A stage barrier is not a dependent the user wrote: left naming the step, it would
        // fail validation with a message about an internal id.
        for position in definitions.indices where definitions[position].isHidden {
            guard let slot = definitions[position].after.firstIndex(of: id) else { continue }
            var after = definitions[position].after
            after.remove(at: slot)
            for predecessor in removed.requires + removed.after where !after.contains(predecessor) {
                after.append(predecessor)
            }
            definitions[position].after = after
        }
        compiled = CompiledGraph(definitions)
        return true
    }

    /// Removes every task and milestone.
    public mutating func removeAll() {
        definitions.removeAll()
        tasksInOrderOfAddition.removeAll()
        compiled = CompiledGraph()
    }

    /// Checks ids, durations, retry counts, dependencies and cycles without running anything.
    /// A concurrency limit is an argument of starting, so starting checks it.
    ///
    /// - Complexity: O(1) for a graph whose tasks were all added after their dependencies;
    ///   otherwise O(V + E).
    public func validate() throws(GraphError) {
        try checkDependencies()
        guard !compiled.isComplete else { return }
        try GraphValidation.validate(definitions)
    }

    /// Validates the graph and starts running it in a task of its own, returning at once.
    /// Like `Task {}`, that task carries the caller's task-local values to every operation.
    ///
    /// Every call starts a new run: calling it twice runs every task twice, side effects
    /// included. (``Launcher/start()`` differs: a launcher launches once, and a second call
    /// does nothing.)
    ///
    /// Like `Task {}`, the run is unstructured: it goes on until it ends or you cancel it
    /// (``GraphRun/cancel()``). Cancelling a task that awaits ``GraphRun/report()`` ends that
    /// wait, not the run. Prefer ``run(concurrencyLimit:clock:telemetry:)`` where the run should
    /// be bound to the current task.
    ///
    /// - Parameters:
    ///   - concurrencyLimit: The most tasks running at once, at least 1; `nil` for no limit.
    ///     A limit below 1 throws ``GraphError/Code/invalidConfiguration`` and nothing starts.
    ///   - clock: Measures timeouts, backoff and the report's times.
    ///   - telemetry: Receives the run's span, a span per task attempt and the run's metrics
    ///     (see <doc:Tracing> and <doc:Metrics>); by default whatever the process bootstrapped.
    ///   - staysOpen: Whether the run stays open for more tasks once those it holds have
    ///     ended, until ``GraphRun/close()`` (or ``GraphRun/cancel()``); by default it
    ///     finishes then, and ``GraphRun/add(_:dependsOn:options:_:)`` throws
    ///     ``GraphError/Code/runFinished``. An open run goes on until it is closed, even when
    ///     nothing holds it any more.
    ///
    /// ```swift
    /// let fibonacci = try TaskGraph().start(staysOpen: true)
    /// var (a, b) = (0, 1)
    /// for step in 0..<30 {
    ///     let next = try fibonacci.add("fib-\(step)") { [a, b] _ in a + b }
    ///     (a, b) = (b, try await fibonacci.value(of: next))
    /// }
    /// fibonacci.close()  // finishes once what it holds has ended
    /// ```
    public func start(
        concurrencyLimit: Int? = nil,
        clock: some Clock<Duration> = ContinuousClock(),
        telemetry: Telemetry = .bootstrapped,
        staysOpen: Bool = false
    ) throws(GraphError) -> GraphRun {
        try Self.check(concurrencyLimit)
        try validate()
        let run = GraphRun(
            storage: GraphRunStorage(
                definitions: definitions, compiled: compiledIfComplete, concurrencyLimit: concurrencyLimit,
                clock: ClockSource(clock), instruments: Self.instruments(telemetry), staysOpen: staysOpen)
        )
        run.storage.startDriving()
        return run
    }

    /// Validates the graph and runs it to the end in the current task; cancelling the current
    /// task cancels the run, and from a task cancelled already no task begins and the run
    /// ends ``RunOutcome/cancelled`` (a graph with no tasks has nothing to cancel, and
    /// completes). Returns the report, whose ``RunReport/outcome`` says
    /// whether every required task succeeded. `concurrencyLimit` is as for
    /// ``start(concurrencyLimit:clock:telemetry:staysOpen:)``: at least 1, or `nil`.
    public func run(
        concurrencyLimit: Int? = nil,
        clock: some Clock<Duration> = ContinuousClock(),
        telemetry: Telemetry = .bootstrapped
    ) async throws(GraphError) -> RunReport {
        try await run(concurrencyLimit: concurrencyLimit, clock: clock, telemetry: telemetry) { _ in }
    }

    /// Validates the graph and runs it in the current task while `body` runs beside it with
    /// the run's handle (to watch events, await milestones, add tasks). Returns the report
    /// once both have ended; cancelling the current task cancels the run (from a task
    /// cancelled already, no task begins).
    ///
    /// With `staysOpen`, the run does not finish before `body` returns, however soon its tasks
    /// end: `body` can go on adding tasks and awaiting their values, and the run is closed
    /// (``GraphRun/close()``) when it returns.
    ///
    /// ```swift
    /// let feedReport = try await TaskGraph().run(staysOpen: true) { run in
    ///     guard let feed = try? run.add("feed", { _ in try await api.feed() }),
    ///         let items = try? await run.value(of: feed)
    ///     else { return }
    ///     for item in items { _ = try? run.add("images-\(item)") { _ in try await api.images(for: item) } }
    /// }
    /// ```
    public func run(
        concurrencyLimit: Int? = nil,
        clock: some Clock<Duration> = ContinuousClock(),
        telemetry: Telemetry = .bootstrapped,
        staysOpen: Bool = false,
        _ body: @escaping @Sendable (GraphRun) async -> Void
    ) async throws(GraphError) -> RunReport {
        try Self.check(concurrencyLimit)
        try validate()
        let run = GraphRun(
            storage: GraphRunStorage(
                definitions: definitions, compiled: compiledIfComplete, concurrencyLimit: concurrencyLimit,
                clock: ClockSource(clock), instruments: Self.instruments(telemetry), staysOpen: staysOpen)
        )
        await withDiscardingTaskGroup { group in
            group.addTask {
                await body(run)
                run.close()
            }
            // The handler is in place before the driver exists: a caller cancelled already has
            // cancelled the run when the driver starts, so it hands out no body. Driven in a
            // task of its own (which inherits this task's task-locals and priority), so
            // `cancel()` reaches running bodies at once.
            // Waits for the report, not for the driver's task: that one also waits for bodies
            // the run has let go (a timed body past its deadline), which the run does not.
            await withTaskCancellationHandler {
                run.storage.startDriving()
                await run.storage.afterStartingDriver()
                _ = await run.storage.reportCell.waitIgnoringCancellation()
            } onCancel: {
                run.storage.cancel()
            }
        }
        return await run.storage.reportCell.waitIgnoringCancellation()
    }

    mutating func append<Result>(id: String, dependencies: TaskDependencies, spec: TaskSpec) -> TaskHandle<Result> {
        note(dependencies, of: id)
        append(
            NodeDefinition(
                id: id, requires: dependencies.names, after: [], kind: .task(spec), stage: nil, isHidden: false))
        return TaskHandle(id: id)
    }

    /// Remembers a task added ``TaskDependencies/inOrderOfAddition``, which validation reports.
    mutating func note(_ dependencies: TaskDependencies, of id: String) {
        if dependencies.isInOrderOfAddition { tasksInOrderOfAddition.append(id) }
    }

    /// Reports the first task added ``TaskDependencies/inOrderOfAddition``: a graph has no
    /// order of addition to follow.
    func checkDependencies() throws(GraphError) {
        if let id = tasksInOrderOfAddition.first { throw .inOrderOfAddition(task: id) }
    }

    mutating func append(_ definition: NodeDefinition) {
        definitions.append(definition)
        compiled.append(definitions.count - 1, of: definitions)
    }

    /// Every way of starting takes its limit here, before anything is built: a limit of zero
    /// would start nothing, ever, so it is reported rather than counted as 1.
    static func check(_ concurrencyLimit: Int?) throws(GraphError) {
        if let concurrencyLimit, concurrencyLimit < 1 { throw .concurrencyLimit(concurrencyLimit) }
    }

    private var compiledIfComplete: CompiledGraph? { compiled.isComplete ? compiled : nil }

    private static func instruments(_ telemetry: Telemetry) -> RunInstruments? {
        RunInstruments(telemetry, kind: .graph, spanName: "graph.run")
    }
}
