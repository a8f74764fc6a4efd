/// One attempt of a task whose body runs in a task of its own (it has a timeout, or belongs
/// to a launcher), raced against its timeout and against abandonment: a plain value the run's
/// state machine keeps by node, so the race is decided under the run's one lock, with the rest
/// of the task's life.
///
/// The machine makes it the moment the attempt wins the right to start, so there is no window
/// in which the attempt runs unregistered. It is settled exactly once — by the body, by the
/// timeout, or by abandonment (a removal, or the run's stop), whichever comes first — and what
/// settled it is what the worker records. Abandoned before its body's task exists, the body
/// never starts; a body that settles late finds the attempt settled (or gone) and changes
/// nothing.
struct AttemptInTask {
    enum Result: Sendable {
        case success(any Sendable)
        case failure(any Error)
        case timedOut(Duration)
        case cancelled
    }

    /// The attempt's number: a late body or timer of an earlier attempt of the same task
    /// names another number, and its result goes nowhere.
    let number: Int32
    /// Whether the worker has claimed the right to create the body's task.
    private(set) var claimed = false
    /// The body's task, once created: cancelled when the attempt is abandoned, and by the
    /// worker once the attempt has settled, so a body left behind by a timeout does not run on
    /// unheeded.
    private(set) var body: Task<Void, Never>?
    /// How the attempt ended, decided once, and its worker while it waits for that.
    private var outcome = AwaitableSettlement<Result>()

    init(number: Int32) { self.number = number }

    var result: Result? { outcome.outcome }

    var isSettled: Bool { outcome.isSettled }

    /// The worker claims the right to start the body; `false` once the attempt has settled
    /// (abandoned before the body started), and then the body never starts. Not a settlement:
    /// the attempt's outcome is decided once, by ``settle(_:)``; this only lets the body begin.
    mutating func claim() -> Bool {
        guard !isSettled, !claimed else { return false }
        claimed = true
        return true
    }

    /// Keeps the body's task; `false` if the attempt settled meanwhile (the caller cancels it).
    mutating func attach(_ task: Task<Void, Never>) -> Bool {
        body = task
        return !isSettled
    }

    /// Settles the attempt, unless it is settled already. Returns whether this settled it,
    /// and the waiting worker (there is one at most) to resume once the lock is released.
    mutating func settle(_ result: Result) -> (settled: Bool, worker: WaiterSet<Void>.Waiter?) {
        guard let workers = outcome.settle(result) else { return (false, nil) }
        return (true, workers.first)
    }

    /// The worker waits for the result, or has it at once.
    mutating func register(_ waiter: WaiterSet<Void>.Waiter) -> SuspensionDecision<Void, Void> {
        outcome.register(waiter)
    }
}
