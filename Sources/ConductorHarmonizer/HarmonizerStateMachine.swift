/// The slow-path state of a ``Harmonizer``: its stash, the named participants still
/// present, who to tell about the outcome and who awaits it, and the outcome once decided.
///
/// The counter itself is an atomic in ``Harmonizer`` so an anonymous count-down takes no
/// lock; everything here changes under the harmonizer's lock, and ``decide(_:)`` is the
/// single point where the outcome is chosen: it settles the machine's ``Settlement``, so
/// completion, timeout and cancellation racing each other produce one outcome. Transitions
/// return what the caller must do after unlocking; nothing here runs user code or resumes a
/// continuation.
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
        /// The journal turn of the outcome's event; the journal ends in the turn after it.
        var journalTurn: Int
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
    /// Settled with the same outcome once the decider has carried the decision out (observers
    /// told first, so an immediate one — the registry freeing the name — has run by the time
    /// a task awaiting the outcome wakes up): what those tasks await.
    var publication = AwaitableSettlement<Harmonizer.Outcome>()
    /// The journal turn of the next event (see `EventJournal.append(_:turn:)`): events are
    /// numbered here, under the harmonizer's lock, and appended after it is released.
    private var nextJournalTurn = 0

    init(participants: [String]) {
        for participant in participants { waiting.present[participant, default: 0] += 1 }
    }

    /// Takes the journal turns of the next `count` events and returns the first.
    mutating func takeJournalTurns(_ count: Int = 1) -> Int {
        defer { nextJournalTurn += count }
        return nextJournalTurn
    }

    /// The outcome, once decided.
    var outcome: Harmonizer.Outcome? { settlement.outcome }

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

    /// Records that `participant` arrived. The caller has already counted it up.
    mutating func arrive(_ participant: String) {
        modifyWaiting { $0.present[participant, default: 0] += 1 }
    }

    /// Records that `participant` left. The caller has already counted it down.
    mutating func leave(_ participant: String) {
        modifyWaiting { waiting in
            guard let times = waiting.present[participant] else { return }
            waiting.present[participant] = times > 1 ? times - 1 : nil
        }
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
        return Decision(
            outcome: outcome, observers: ended.observers, timeout: ended.timeout, journalTurn: takeJournalTurns(2))
    }

    /// Applies `change` while waiting; returns whether it was applied.
    @discardableResult
    private mutating func modifyWaiting(_ change: (inout Waiting) -> Void) -> Bool {
        guard isWaiting else { return false }
        change(&waiting)
        return true
    }
}
