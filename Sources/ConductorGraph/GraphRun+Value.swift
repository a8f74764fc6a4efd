extension GraphRun {
    /// Waits, from outside the run, until the task ends, and returns its value.
    ///
    /// ```swift
    /// let info = try run.add("basicInfo") { _ in try await api.basicInfo() }
    /// let product = try await run.value(of: info)  // the run goes on
    /// try run.add("sku") { _ in try await api.sku(for: product.productID) }
    /// ```
    ///
    /// Works for a handle from ``add(_:dependsOn:options:_:)`` and for one from
    /// ``TaskGraph/add(_:dependsOn:options:_:)`` of the graph the run started from: a handle
    /// names its task by id. If the task does not succeed, throws an error that names it:
    /// ``GraphError/Code/taskFailed`` if it failed (what its body threw is the error's
    /// ``GraphError/underlyingError``) or was skipped, ``GraphError/Code/timedOut``, or
    /// ``GraphError/Code/cancelled`` if it ended cancelled (removed, or the run stopped);
    /// ``GraphError/Code/unknownTask`` for an id the run does not have. A waiter that gives
    /// up leaves the task alone: if the waiting task is cancelled, this throws
    /// ``GraphError/Code/cancelled`` at once and the task goes on.
    ///
    /// - Complexity: one short lock if the task has ended; otherwise it waits, and the task's
    ///   end wakes it. A task nobody waits for pays nothing.
    public func value<Result: Sendable>(of task: TaskHandle<Result>) async throws(GraphError) -> Result {
        switch await waitForEnd(of: task.id) {
        case nil:
            throw .unknownTask(task.id)
        case .pending?:
            throw .cancelled(waitingForTask: task.id)
        case .ended(let result)?:
            guard let value = try result.get() as? Result else { throw .valueType(task.id, expected: Result.self) }
            return value
        }
    }

    /// Lets a run started to stay open finish once what it holds has ended (at once if it
    /// has). Until then ``add(_:dependsOn:options:_:)`` goes on working; once it has finished,
    /// adding throws ``GraphError/Code/runFinished``. Closing a run that was not held open, or
    /// twice, does nothing.
    ///
    /// ```swift
    /// let loading = try graph.start(staysOpen: true)
    /// for image in images { try loading.add("load-\(image)") { _ in try await load(image) } }
    /// loading.close()
    /// let loaded = try await loading.report()
    /// ```
    ///
    /// A run held open does not finish by itself, so it goes on until ``close()`` or
    /// ``cancel()`` even when nothing holds its `GraphRun` any more: close what you open.
    public func close() {
        storage.close()
    }

    /// Waits until task `id` has ended, and returns how (`.pending` if the waiting task was
    /// cancelled first); `nil` for an id that names no task of the run.
    private func waitForEnd(of id: String) async -> GraphResultWaiters.Outcome? {
        guard let node = storage.read({ GraphResultWaiters.task(id, topology: $0.topology, table: $0.table) }) else {
            return nil
        }
        await storage.suspendCancellably(
            { $0.resultWaiters.wait(for: node, $1, table: &$0.table) },
            remove: { $0.resultWaiters.removeWaiter(of: node, id: $1, table: &$0.table) })
        // Read under the lock, not handed over: ended, or still pending for a cancelled waiter.
        return storage.read { GraphResultWaiters.outcome(of: node, id: id, in: $0.table) }
    }
}
