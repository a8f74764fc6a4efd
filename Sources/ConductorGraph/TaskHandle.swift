/// A typed reference to a task in a ``TaskGraph``, for reading its result from a dependent.
///
/// ```swift
/// let info = graph.add("basicInfo") { _ in try await api.basicInfo() }
/// graph.add("gallery", dependsOn: [info.id]) { context in
///     try await api.images(for: context.value(of: info).productID)
/// }
/// ```
public struct TaskHandle<Result: Sendable>: Hashable, Sendable, CustomStringConvertible {
    /// The task's id.
    public let id: String

    package init(id: String) { self.id = id }

    public var description: String { id }
}

/// What a running task can see of its run: its own id and attempt, the results of the
/// tasks that finished before it, and the run itself, to add tasks, remove them or await a
/// milestone.
///
/// ```swift
/// graph.add("sku", dependsOn: ["basicInfo"]) { context in
///     let info = try context.value(of: basicInfo)
///     return try await api.sku(for: info.productID, attempt: context.attempt)
/// }
/// ```
public struct TaskContext: Sendable {
    /// The id of the running task.
    ///
    /// - Complexity: O(1), one short lock: a context holds the task's position, so starting a
    ///   task never copies its id.
    public var id: String { storage.id(of: node) }
    /// The attempt number, starting at 1.
    public let attempt: Int
    /// Set by a worker that runs a chain of plain tasks with one context.
    var node: Int
    let storage: GraphRunStorage

    /// The run this task belongs to: a body can add tasks to it, remove tasks, await its
    /// milestones or cancel it, as the holder of the run can.
    ///
    /// ```swift
    /// graph.add("feed") { context in
    ///     let items = try await api.feed()
    ///     for item in items {  // one task per item, known only now; the run waits for them
    ///         try context.run.add("images-\(item)", dependsOn: ["feed"]) { _ in try await api.images(for: item) }
    ///     }
    ///     return items
    /// }
    /// ```
    ///
    /// The run waits for what a body adds, as for any task. A body that awaits a milestone
    /// which needs its own task, or a task that needs it, waits forever; while it waits it
    /// holds one of the run's `concurrencyLimit` places; to wait for tasks it adds without
    /// one, add them with ``addSubtask(_:dependsOn:options:_:)`` and ``join()``. Use the run
    /// while the body runs: in a task you add, read that task's own `context.run` rather than
    /// capturing this one, since a run keeps its tasks' closures, and a closure that holds its
    /// run keeps the run alive for good.
    ///
    /// A start-up task's ``StartupTask/run()`` has no context: a ``Launcher``'s tasks change
    /// the launch through the launcher.
    ///
    /// - Complexity: O(1): a small handle made on each read, so a task that does not read it
    ///   pays nothing.
    public var run: GraphRun { GraphRun(storage: storage) }

    init(node: Int, attempt: Int, storage: GraphRunStorage) {
        self.node = node
        self.attempt = attempt
        self.storage = storage
    }

    /// The result of a task that has succeeded. Throws ``GraphError/Code/resultUnavailable``
    /// if it has not (it failed, was skipped, or has not finished).
    ///
    /// - Complexity: O(1), one short lock.
    public func value<Result>(of task: TaskHandle<Result>) throws(GraphError) -> Result {
        guard let value = storage.result(of: task.id) as? Result else {
            throw .resultUnavailable(task.id, in: id)
        }
        return value
    }
}
