/// Who waits, from outside the run, for a task to end (``GraphRun/value(of:)``).
///
/// Empty unless someone waits. A node somebody waits for carries the flag
/// ``GraphNodeTable/Flags/isAwaited``, so the end of a task nobody awaits costs one bit test
/// (``GraphStateMachine/endSucceeded(_:startedAt:now:effects:)``) and never looks here. The
/// value itself is not handed over: a woken waiter reads the node's end under the run's lock
/// (``outcome(of:in:)``), where it is kept once.
struct GraphResultWaiters {
    private var waiters: [Int32: WaiterSet<Void>] = [:]

    /// How waiting for a task ended, read under the lock once the waiter is resumed.
    enum Outcome {
        /// The task has not ended: the waiting task was cancelled first.
        case pending
        case ended(Result<any Sendable, GraphError>)
    }

    /// A caller waits for node `node`'s end, or goes on at once if it has ended.
    mutating func wait(
        for node: Int, _ waiter: WaiterSet<Void>.Waiter, table: inout GraphNodeTable
    ) -> SuspensionDecision<Void, Void> {
        guard !table.nodes[node].phase.hasEnded else { return .resume((), ()) }
        table.nodes[node].flags.insert(.isAwaited)
        waiters[Int32(node), default: WaiterSet()].insert(waiter)
        return .wait(())
    }

    /// Takes out waiter `id` of `node` (its task was cancelled); the node loses its flag with
    /// its last waiter.
    mutating func removeWaiter(
        of node: Int, id: UInt64, table: inout GraphNodeTable
    ) -> WaiterSet<Void>.Waiter? {
        guard let waiter = waiters[Int32(node)]?.remove(id) else { return nil }
        if waiters[Int32(node)]?.isEmpty ?? true {
            waiters[Int32(node)] = nil
            table.nodes[node].flags.remove(.isAwaited)
        }
        return waiter
    }

    /// Node `node`, flagged ``GraphNodeTable/Flags/isAwaited``, has ended: its waiters are
    /// resumed once the lock is released. Out of line: the end of a task nobody awaits only
    /// tests the flag.
    @inline(never)
    mutating func ended(_ node: Int, effects: inout GraphEffects) {
        guard var ended = waiters.removeValue(forKey: Int32(node)) else { return }
        effects.resume(ended.removeAll())
    }

    /// The task `id` names: `nil` for an id the run does not have, a milestone's, or one of
    /// the run's own hidden nodes.
    static func task(_ id: String, topology: GraphTopology, table: GraphNodeTable) -> Int? {
        guard let index = topology.position(of: id).map(Int.init), !topology.definitions[index].isHidden,
            table.nodes[index].isTask
        else { return nil }
        return index
    }

    /// How node `node` (named `id`) ended, as ``GraphRun/value(of:)`` answers: its value if it
    /// succeeded, otherwise an error that names it.
    static func outcome(of node: Int, id: String, in table: GraphNodeTable) -> Outcome {
        let phase = table.nodes[node].phase
        guard phase.hasEnded else { return .pending }
        if let value = table.result(of: node) { return .ended(.success(value)) }
        switch table.endings[Int32(node)] {
        case .failed(let error)?: return .ended(.failure(.failed(task: id, error)))
        case .timedOut(let after)?: return .ended(.failure(.timedOut(id, after: after)))
        case .skipped(let dependency)?: return .ended(.failure(.skipped(task: id, dependency: dependency)))
        case .succeeded?, .cancelled?, nil:
            return .ended(.failure(.cancelled(task: id, removed: table.removed.contains(Int32(node)))))
        }
    }
}
