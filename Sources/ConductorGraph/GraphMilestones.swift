/// A run's milestones: each one's outcome, and the tasks waiting for it.
///
/// A milestone's outcome — reached at a time, or missed once the run finished first — is kept
/// once, in its settlement; the order in which they were reached (the report's) is the one
/// other fact, kept as names.
struct GraphMilestones {
    typealias Outcome = Result<Duration, GraphError>

    /// By name. Registered when its marker is added, so a wait that comes before the marker is
    /// reached knows the name.
    private var outcomes: [String: AwaitableSettlement<Outcome>] = [:]
    /// The names of the milestones reached, in the order they were.
    private var reachedInOrder: [String] = []

    /// Knows milestone `name` from now on, undecided.
    mutating func register(_ name: String) {
        guard outcomes[name] == nil else { return }
        outcomes[name] = AwaitableSettlement()
    }

    /// Milestone `name` is reached at `time`; returns the tasks to resume.
    mutating func reach(_ name: String, at time: Duration) -> [WaiterSet<Void>.Waiter] {
        guard let waiters = outcomes[name]?.settle(.success(time)) else { return [] }
        reachedInOrder.append(name)
        return waiters
    }

    /// The run finished: milestones not reached by now never will be. Returns the tasks to
    /// resume.
    mutating func missTheRest() -> [WaiterSet<Void>.Waiter] {
        var resumed: [WaiterSet<Void>.Waiter] = []
        for name in outcomes.keys {
            if let waiters = outcomes[name]?.settle(.failure(.milestoneMissed(name))) {
                resumed.append(contentsOf: waiters)
            }
        }
        return resumed
    }

    /// The milestones reached, in order, with the time each was.
    var reached: [(name: String, at: Duration)] {
        reachedInOrder.map { name in
            guard case .success(let time)? = outcomes[name]?.outcome else {
                preconditionFailure("milestone \(name) is listed as reached but its outcome is not a time")
            }
            return (name, time)
        }
    }

    /// The outcome of milestone `name`: `nil` if the run has no such milestone, `.some(nil)`
    /// while it is neither reached nor missed.
    func outcome(_ name: String) -> Outcome?? {
        guard let settlement = outcomes[name] else { return nil }
        return .some(settlement.outcome)
    }

    /// A task waits for milestone `name`, or has its outcome at once (also when the run has
    /// no such milestone: the caller asked first).
    mutating func wait(for name: String, _ waiter: WaiterSet<Void>.Waiter) -> SuspensionDecision<Void, Void> {
        guard outcomes[name] != nil else { return .resume((), ()) }
        return outcomes[name]!.register(waiter)
    }

    /// Takes out waiter `id` of milestone `name` (its task was cancelled).
    mutating func removeWaiter(_ name: String, id: UInt64) -> WaiterSet<Void>.Waiter? {
        outcomes[name]?.remove(id)
    }
}
