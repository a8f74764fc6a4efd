extension TaskContext {
    /// Adds a subtask: a task of this task's run that this body can wait for with ``join()``.
    ///
    /// ```swift
    /// graph.add("gallery") { context in
    ///     let front = try context.addSubtask("front") { _ in try await load("front") }  // "gallery/front"
    ///     let back = try context.addSubtask("back") { _ in try await load("back") }     // "gallery/back"
    ///     try await context.join()  // holds no place of the run while they run
    ///     return [try context.value(of: front), try context.value(of: back)]
    /// }
    /// ```
    ///
    /// Its id is `"<this task's id>/<name>"`; a later attempt of a retried task adds
    /// `"<id>#<attempt>/<name>"`, so it can add its subtasks again. It may depend on any task of
    /// the run, and is validated like a task added with ``GraphRun/add(_:dependsOn:options:_:)``
    /// (a duplicate name throws ``GraphError/Code/duplicateID``; a stopped run,
    /// ``GraphError/Code/runFinished``). A subtask that depends on its parent cannot start
    /// before the parent ends, so joining it would wait forever. The report lists it right
    /// after its parent, with ``TaskRecord/parent`` naming it.
    @discardableResult
    public func addSubtask<Result: Sendable>(
        _ name: String,
        dependsOn dependencies: TaskDependencies = .independent,
        options: TaskOptions = TaskOptions(),
        _ operation: @escaping @Sendable (TaskContext) async throws -> Result
    ) throws(GraphError) -> TaskHandle<Result> {
        let parent = id
        let subtaskID = attempt == 1 ? "\(parent)/\(name)" : "\(parent)#\(attempt)/\(name)"
        var graph = TaskGraph()
        graph.add(subtaskID, dependsOn: dependencies, options: options, operation)
        try graph.checkDependencies()
        let definition = graph.definitions[0].withParent(parent)
        let checked = try GraphValidation.check([definition])
        let now = storage.clock.nanoseconds
        try storage.update { (machine, effects) throws(GraphError) in
            guard machine.isRunning else { throw .runFinished(adding: subtaskID) }
            try checked.check(against: machine.topology)
            machine.joins.added(machine.table.nodes.count, by: node, attempt: attempt)
            machine.insert([definition], now: now, effects: &effects)
        }
        return TaskHandle(id: subtaskID)
    }

    /// Waits until every subtask this attempt added (``addSubtask(_:dependsOn:options:_:)``)
    /// has ended, whatever its outcome; read their values with ``value(of:)``.
    ///
    /// While it waits, this task holds no place of its run's `concurrencyLimit`, so its
    /// subtasks can run even under a limit of 1; when they have ended it takes a place back
    /// before any other task starts. A task with a timeout, whose body runs in a task of its
    /// own, keeps its place while it waits. Returns at once if they have all ended. Throws
    /// ``GraphError/Code/cancelled`` if the run stops first; cancelling the body does not end
    /// the wait.
    public func join() async throws(GraphError) {
        let (node, attempt, now) = (node, attempt, storage.clock.nanoseconds)
        await storage.park { machine, waiter, effects in
            GraphJoins.join(node, attempt: attempt, waiter: waiter, now: now, in: &machine, effects: &effects)
        }
        // Not handed over: read under the lock. They have all ended, unless the run stopped.
        let ended = storage.read { machine in
            machine.joins.subtasks(of: node, attempt: attempt).allSatisfy {
                machine.table.nodes[Int($0)].phase.hasEnded
            }
        }
        guard ended else { throw .cancelled(joining: id) }
    }
}
