/// The slow-path state of a ``Harmonizer``: its stash, the named participants still
/// present, its journal of events, who to tell about the outcome and who awaits it, and the
/// outcome once decided.
///
/// The counter itself is an atomic in ``Harmonizer`` so an anonymous count-down takes no
/// lock; everything here changes under the harmonizer's lock, and ``decide(_:)`` is the
/// single point where the outcome is chosen: it settles the machine's ``Settlement``, so
/// completion, timeout and cancellation racing each other produce one outcome. Transitions
/// return what the caller must do after unlocking; nothing here runs user code or resumes a
/// continuation.
///
/// The end has three marks, each for a reader the others cannot serve: the counter's closed
/// state (lock-free, so an anonymous count-down and `isFinished` never take the lock), the
/// ``Settlement`` (the outcome itself, kept here only, decided under the lock) and
/// ``publication`` (no outcome, only the moment the decider has carried it out: metrics,
/// journal and observers first, then the tasks awaiting it).
struct HarmonizerStateMachine {
    /// Someone to tell about the outcome, on their target.
    struct Observer: Sendable {
        var target: CallbackTarget
        var handler: @Sendable (Harmonizer.Outcome) -> Void
    }

    /// Why the harmonizer ends.
    enum Reason {
        case completed, timedOut, cancelled
    }

    /// What the decider must do once the lock is released.
    struct Decision: Sendable {
        var outcome: Harmonizer.Outcome
        var observers: [Observer]
        /// The armed timeout, to cancel.
        var timeout: DeadlineToken?
    }

    /// What exists only until the outcome: dropped when it is decided, which releases the
    /// stash of a cancelled harmonizer and the observers' closures.
    private struct Waiting {
        var stash = HarmonizerStash()
        /// How many times each named participant arrived and has not yet left.
        var present: [String: Int] = [:]
        var observers: [Observer] = []
        var timeout: DeadlineToken?
    }

    private var waiting = Waiting()
    /// Settled by ``decide(_:)``: the outcome, decided once.
    private var settlement = Settlement<Harmonizer.Outcome>()
    /// Settled once the decider has carried the decision out (observers told first, so an
    /// immediate one — the registry freeing the name — has run by the time a task awaiting
    /// the outcome wakes up): what those tasks await. Internal for `Lock.wait(for:)`.
    var publication = AwaitableSettlement<Void>()
    /// The named participants' arrivals and departures, then the outcome: appended in the
    /// transition that caused each (the outcome's once it is carried out), so in their order.
    /// Internal for `Lock.batch(from:limit:journal:)`.
    var journal = JournalBuffer<HarmonizerEvent>(keepingNewest: nil)

    init(participants: [String]) {
        for participant in participants { waiting.present[participant, default: 0] += 1 }
    }

    /// The outcome, once decided.
    var outcome: Harmonizer.Outcome? { settlement.outcome }

    /// The outcome, once the decider has carried it out.
    var publishedOutcome: Harmonizer.Outcome? { publication.isSettled ? outcome : nil }

    var isWaiting: Bool { !settlement.isSettled }

    /// The named participants present, sorted, each as many times as it is expected; empty
    /// once decided.
    var missing: [String] {
        waiting.present.flatMap { participant, times in repeatElement(participant, count: times) }.sorted()
    }

    /// Whether `participant` arrived by name and has not left yet.
    func isPresent(_ participant: String) -> Bool {
        waiting.present[participant] != nil
    }

    /// Records that `participant` arrived, making the count `count` (the caller has already
    /// counted it up); returns the journal's readers to resume.
    mutating func enter(_ participant: String, count: Int) -> [WaiterSet<Void>.Waiter] {
        guard modifyWaiting({ $0.present[participant, default: 0] += 1 }) else { return [] }
        return journal.append(contentsOf: CollectionOfOne(.entered(participant, count: count)))
    }

    /// Records that `participant` left, leaving the count at `count` (the caller has already
    /// counted it down); returns the journal's readers to resume.
    mutating func leave(_ participant: String, count: Int) -> [WaiterSet<Void>.Waiter] {
        guard isWaiting, let times = waiting.present[participant] else { return [] }
        waiting.present[participant] = times > 1 ? times - 1 : nil
        return journal.append(contentsOf: CollectionOfOne(.left(participant, count: count)))
    }

    /// Keeps `value` for the outcome. Returns `false` once the outcome is decided.
    mutating func stash(_ value: any Sendable, forKey key: String) -> Bool {
        modifyWaiting { $0.stash.store(value, forKey: key) }
    }

    /// Adds an observer while waiting; once decided, returns the outcome to deliver at once.
    mutating func observe(_ observer: Observer) -> Harmonizer.Outcome? {
        if modifyWaiting({ $0.observers.append(observer) }) { return nil }
        return outcome
    }

    /// Keeps the timeout's deadline so the decision can cancel it. Returns `false` if the
    /// outcome is already decided, in which case the caller cancels the deadline.
    mutating func arm(_ timeout: DeadlineToken) -> Bool {
        modifyWaiting { $0.timeout = timeout }
    }

    /// Ends the harmonizer for `reason`, or returns `nil` when it has already ended.
    mutating func decide(_ reason: Reason) -> Decision? {
        guard isWaiting else { return nil }
        let outcome: Harmonizer.Outcome
        switch reason {
        case .completed:
            outcome = .completed(waiting.stash)
        case .timedOut:
            outcome = .timedOut(waiting.stash, missing: missing)
        case .cancelled:
            outcome = .cancelled
        }
        settlement.settle(outcome)
        // Dropping what was kept while waiting releases the stash (kept in a completed or
        // timed-out outcome) and the observers' closures.
        let ended = waiting
        waiting = Waiting()
        return Decision(outcome: outcome, observers: ended.observers, timeout: ended.timeout)
    }

    /// The decided outcome is being carried out: its event ends the journal. Returns the
    /// journal's readers to resume. No event can come after it: every other transition that
    /// journals needs the harmonizer still waiting.
    mutating func journalOutcome() -> [WaiterSet<Void>.Waiter] {
        guard let outcome else { return [] }
        return journal.append(contentsOf: CollectionOfOne(.finished(outcome))) + journal.finish()
    }

    /// The outcome has been carried out; returns the tasks awaiting it.
    mutating func publish() -> [WaiterSet<Void>.Waiter] {
        publication.settle(()) ?? []
    }

    /// Applies `change` while waiting; returns whether it was applied.
    @discardableResult
    private mutating func modifyWaiting(_ change: (inout Waiting) -> Void) -> Bool {
        guard isWaiting else { return false }
        change(&waiting)
        return true
    }
}
