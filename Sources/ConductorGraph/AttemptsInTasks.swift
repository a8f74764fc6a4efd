/// The current attempt of each running task whose body runs in a task of its own, by node,
/// from the moment the attempt wins the right to start until its worker has recorded how it
/// went (``GraphStateMachine/complete(_:outcome:startedAt:now:helper:effects:)`` or
/// ``GraphStateMachine/attemptFailed(_:attempt:error:delay:now:effects:)``).
///
/// Every operation names the attempt by node and number: a late body or timer of an earlier
/// attempt of the same task names another number, and finds nothing.
struct AttemptsInTasks {
    private var byNode: [Int: AttemptInTask] = [:]

    var isEmpty: Bool { byNode.isEmpty }

    /// Attempt `number` of `node` has won the right to start.
    mutating func start(_ node: Int, number: Int32) {
        byNode[node] = AttemptInTask(number: number)
    }

    /// The worker has recorded the attempt: it is forgotten.
    mutating func forget(_ node: Int) {
        byNode[node] = nil
    }

    /// `node`'s current attempt, if it has one.
    func current(_ node: Int) -> AttemptInTask? { byNode[node] }

    var nodes: Dictionary<Int, AttemptInTask>.Keys { byNode.keys }

    enum Claim {
        /// The worker may create the body's task.
        case claimed
        /// Abandoned before the body started, which it now never does.
        case settled(AttemptInTask.Result)
    }

    /// The worker claims the right to start attempt `number` of `node`'s body.
    mutating func claim(_ node: Int, number: Int) -> Claim {
        guard var attempt = byNode[node], attempt.number == number else { return .settled(.cancelled) }
        defer { byNode[node] = attempt }
        if attempt.claim() { return .claimed }
        return .settled(attempt.result ?? .cancelled)
    }

    /// Keeps the task of an attempt's body; `false` when the attempt has settled meanwhile
    /// (or is gone), and the caller cancels the task.
    mutating func attach(_ task: Task<Void, Never>, of node: Int, number: Int) -> Bool {
        guard var attempt = byNode[node], attempt.number == number else { return false }
        defer { byNode[node] = attempt }
        return attempt.attach(task)
    }

    /// Whether attempt `number` of `node` is still unsettled.
    func isOpen(_ node: Int, number: Int) -> Bool {
        guard let attempt = byNode[node], attempt.number == number else { return false }
        return !attempt.isSettled
    }

    /// Settles attempt `number` of `node` with `result` unless something settled it first;
    /// returns the waiting worker to resume.
    mutating func settle(_ node: Int, number: Int, with result: AttemptInTask.Result) -> WaiterSet<Void>.Waiter? {
        guard var attempt = byNode[node], attempt.number == number else { return nil }
        defer { byNode[node] = attempt }
        return attempt.settle(result).worker
    }

    /// Settles `node`'s attempt as cancelled, if one is in flight and unsettled: returns its
    /// body's task (to cancel) and its waiting worker (to resume), `nil` if it had settled.
    mutating func abandon(_ node: Int) -> (body: Task<Void, Never>?, worker: WaiterSet<Void>.Waiter?)? {
        guard var attempt = byNode[node] else { return nil }
        let (settled, worker) = attempt.settle(.cancelled)
        guard settled else { return nil }
        byNode[node] = attempt
        return (attempt.body, worker)
    }

    /// The worker waits for attempt `number` of `node` to settle, or has its result at once.
    mutating func wait(_ node: Int, number: Int, _ waiter: WaiterSet<Void>.Waiter) -> SuspensionDecision<Void, Void> {
        guard var attempt = byNode[node], attempt.number == number else { return .resume((), ()) }
        defer { byNode[node] = attempt }
        return attempt.register(waiter)
    }

    /// How attempt `number` of `node` settled (`cancelled` if it is gone).
    func result(_ node: Int, number: Int) -> AttemptInTask.Result {
        guard let attempt = byNode[node], attempt.number == number else { return .cancelled }
        return attempt.result ?? .cancelled
    }
}
