/// A running ``TaskGraph``: its events, milestones, cancellation, changes and final report.
///
/// ```swift
/// let run = try graph.start()
/// run.observe(on: .mainActor) { event in progress.apply(event) }
/// try await run.reached("firstScreen")   // show the first screen now
/// let report = try await run.report()    // everything has ended
/// ```
public final class GraphRun: Sendable {
    let storage: GraphRunStorage

    init(storage: GraphRunStorage) {
        self.storage = storage
    }

    /// Every event of the run, from its first, however late you ask; ends after
    /// ``GraphEvent/runFinished(_:at:)``.
    public var events: EventSequence<GraphEvent> {
        storage.events
    }

    /// Calls `handler` with every event of the run, from its first, on `target`; events that
    /// arrive together are delivered in one hop. Stops after the run has finished, or when you
    /// cancel the returned handle. A run goes on to its end when its `GraphRun` is released
    /// (like a `Task`), and so do its observers.
    @discardableResult
    public func observe(
        on target: CallbackTarget = .mainActor,
        _ handler: @escaping @Sendable (GraphEvent) -> Void
    ) -> ObservationHandle {
        storage.deliver(from: 0, on: target, handler)
    }

    /// Waits until the milestone is reached and returns when it was (since the run started).
    ///
    /// Throws ``GraphError/Code/unknownMilestone`` for a name the graph does not have,
    /// ``GraphError/Code/milestoneMissed`` if the run ended first (a required task failed or
    /// the run was cancelled), and ``GraphError/Code/cancelled`` if the waiting task is
    /// cancelled; the run itself goes on.
    @discardableResult
    public func reached(_ milestone: String) async throws(GraphError) -> Duration {
        switch await storage.waitForMilestone(milestone) {
        case .unknown: throw .unknownMilestone(milestone)
        case .cancelled: throw .cancelled(waitingFor: milestone)
        case .ended(let result): return try result.get()
        }
    }

    /// Cancels the run: pending tasks end as cancelled and running ones are cancelled.
    /// Cancelling a finished run does nothing.
    public func cancel() {
        storage.cancel()
    }

    /// Waits for the run to end and returns its report; any number of tasks can wait, and
    /// each gets the same report.
    ///
    /// A waiter that gives up stops waiting and leaves the run alone, as awaiting a `Task`
    /// leaves the task alone: if the waiting task is cancelled, this throws
    /// `CancellationError` at once and the run goes on. To stop the run, call ``cancel()``;
    /// to bind it to the current task, run it with
    /// ``TaskGraph/run(concurrencyLimit:clock:telemetry:)`` instead.
    ///
    /// ```swift
    /// let run = try graph.start()
    /// let report = try await run.report()  // throws only if this task is cancelled
    /// ```
    public func report() async throws(CancellationError) -> RunReport {
        guard let report = await storage.reportCell.wait() else { throw CancellationError() }
        return report
    }

    /// Adds the tasks and milestones of `graph` to the run. They may depend on each other and
    /// on any task of the run, finished or not. Validated like a graph (a cycle, an unknown or
    /// duplicate id, a negative duration, a retry policy of fewer than 1 attempt or a task added
    /// ``TaskDependencies/inOrderOfAddition`` is rejected and nothing is added); throws
    /// ``GraphError/Code/runFinished`` once the run has ended or is stopping.
    public func add(_ graph: TaskGraph) throws(GraphError) {
        try graph.checkDependencies()
        try storage.add(graph.definitions)
    }

    /// Adds one task to the run; see ``TaskGraph/add(_:dependsOn:options:_:)``. Checked as
    /// ``add(_:)`` checks a graph of that one task, with the same errors.
    ///
    /// - Complexity: amortized O(1) in the run's size: the task's id and dependencies are
    ///   looked up in the run's index; no graph is built around it.
    ///
    /// ```swift
    /// try run.add("retryLater", dependsOn: ["config"], options: TaskOptions(retry: .attempts(3))) { _ in
    ///     try await sync()
    /// }
    /// ```
    @discardableResult
    public func add<Result: Sendable>(
        _ id: String,
        dependsOn dependencies: TaskDependencies = .independent,
        options: TaskOptions = TaskOptions(),
        _ operation: @escaping @Sendable (TaskContext) async throws -> Result
    ) throws(GraphError) -> TaskHandle<Result> {
        try add(Step(id, dependsOn: dependencies, options: options, operation))
    }

    /// ``add(_:dependsOn:options:_:)`` for an operation that returns nothing, which a worker
    /// calls directly, without the generic method's wrapper. Chosen by the compiler for such
    /// closures; nothing to write differently.
    @_documentation(visibility: internal)
    @discardableResult
    public func add(
        _ id: String,
        dependsOn dependencies: TaskDependencies = .independent,
        options: TaskOptions = TaskOptions(),
        _ operation: @escaping @Sendable (TaskContext) async throws -> Void
    ) throws(GraphError) -> TaskHandle<Void> {
        try add(Step(id, dependsOn: dependencies, options: options, operation))
    }

    /// Adds one task as its own definition: no graph is built around it, and the run checks
    /// it without an index of its own (see ``GraphValidation``), so an add costs the same
    /// however many tasks the run holds.
    private func add<Result>(_ step: Step) throws(GraphError) -> TaskHandle<Result> {
        if step.dependencies.isInOrderOfAddition { throw .inOrderOfAddition(task: step.id) }
        try storage.add([
            NodeDefinition(
                id: step.id, requires: step.dependencies.names, after: [], kind: .task(step.spec), stage: nil,
                isHidden: false)
        ])
        return TaskHandle(id: step.id)
    }

    /// Removes a task that has not ended, and says what that did (see ``TaskRemoval``): a
    /// task that has not started, or waits between attempts, never runs again (`prevented`);
    /// a running one with a timeout runs in a task of its own and is cancelled and abandoned
    /// (`abandoned`); a running one without a timeout has its body cancelled, and the run waits
    /// for that body to return (`stillRunning`). A task the removal ends — all three — is
    /// reported cancelled and removed (``TaskRecord/wasRemoved``), whatever its body did, and
    /// its dependents see a cancelled dependency. Removing is deliberate, so that is no failure,
    /// even of a required task: the run goes on and can still end ``RunOutcome/completed``, and
    /// so can a required task skipped because it needed the removed one.
    /// Throws ``GraphError/Code/unknownTask`` for an id the run does not have.
    @discardableResult
    public func remove(_ id: String) throws(GraphError) -> TaskRemoval {
        try storage.remove(id)
    }
}
