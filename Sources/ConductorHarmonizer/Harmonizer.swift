import Synchronization

/// A `DispatchGroup` that cannot crash, carries data, times out and cancels.
///
/// Participants ``enter()`` (count up) and ``leave()`` (count down), as with `DispatchGroup`, from any thread or task;
/// when the count reaches zero the harmonizer completes with everything they stashed. An
/// extra or late ``leave()`` returns `false` instead of crashing. A timeout ends it at once —
/// without waiting for work that ignores cancellation — and says which named participants
/// never left. A harmonizer of named participants counts only named calls
/// (``leave(_:)``, ``enter(_:)``), so it completes when those it names have left and no sooner:
///
/// ```swift
/// import Foundation
///
/// let harmonizer = try Harmonizer(participants: ["recording", "original", "lead", "prompt"],
///                                 timeout: .seconds(2))
/// // Each download, in whatever module it lives:
/// harmonizer.stash(url, as: "original")
/// harmonizer.leave("original")
///
/// switch await harmonizer.outcome {
/// case .completed(let stash): startSingAlong(original: stash["original"] as? URL)
/// case .timedOut(_, let missing): showRetry(missing)  // ["lead"]
/// case .cancelled: break
/// }
/// ```
///
/// The outcome is decided exactly once: completion, timeout and ``cancel()`` racing each
/// other produce one outcome, delivered once to each waiter and observer, never under a lock.
///
/// While it waits, ``missingParticipants`` says who it is still waiting for — what to log
/// when a screen hangs.
///
/// - Complexity: an anonymous ``enter()`` or ``leave()`` is one atomic add or subtract
///   (a lock is taken only by the one that completes); named participants, stashing
///   and the outcome take a short lock.
public final class Harmonizer: Sendable {
    /// What the registry needs to know about a count-down, beyond whether it counted.
    package enum LeaveResult: Equatable, Sendable {
        case counted, completed, counterAtZero, finished, participantAbsent
        /// Refused: an anonymous count-down on a harmonizer of named participants.
        case anonymous

        var didCount: Bool { self == .counted || self == .completed }
    }

    private let counter: HarmonizerCounter
    /// Made with named participants: anonymous counts are refused, so that completion means
    /// every named participant left. Fixed at creation, so reading it takes no lock.
    package let waitsForNamedParticipants: Bool
    /// The machine, whose settlement decides the outcome and whose waiters await it: one lock
    /// for counting by name, stashing, journaling, observing, awaiting and deciding.
    private let state: Lock<HarmonizerStateMachine>
    private let timeout: Duration?
    /// Where the timeout is armed: the registry's shared timer, or one of its own (only
    /// when it has a timeout).
    private let timer: DeadlineTimer?
    /// Counts the outcome, or `nil` when nothing records metrics.
    private let metrics: HarmonizerMetrics?

    /// A harmonizer that completes after `count` anonymous ``leave()`` calls (more if
    /// participants ``enter()`` meanwhile), or times out after `timeout` (`nil`: never).
    ///
    /// A count of zero waits for the first ``enter()``; it does not complete at once.
    /// Throws ``HarmonizerError`` for a negative count or timeout. `telemetry` counts the
    /// outcome (see <doc:Metrics>); by default with the process's bootstrapped factory.
    public convenience init(
        count: Int,
        timeout: Duration? = nil,
        clock: some Clock<Duration> = ContinuousClock(),
        telemetry: Telemetry = .bootstrapped
    ) throws(HarmonizerError) {
        try self.init(
            name: nil, count: count, participants: nil, timeout: timeout, timer: Self.timer(timeout, clock),
            metrics: HarmonizerMetrics(telemetry))
        armTimeout()
    }

    /// A harmonizer that completes when every named participant has left, or times out after
    /// `timeout` (`nil`: never), reporting those that have not. A name listed twice must leave twice.
    ///
    /// Only named calls count: ``leave()`` and ``enter()`` without a name return `false` and
    /// change nothing, since an anonymous count-down cannot say who left. Others may join with
    /// ``enter(_:)``; an empty list waits for the first of them.
    ///
    /// Throws ``HarmonizerError`` for a negative timeout. `telemetry` counts the outcome (see
    /// <doc:Metrics>); by default with the process's bootstrapped factory.
    public convenience init(
        participants: [String],
        timeout: Duration? = nil,
        clock: some Clock<Duration> = ContinuousClock(),
        telemetry: Telemetry = .bootstrapped
    ) throws(HarmonizerError) {
        let timer = Self.timer(timeout, clock)
        try self.init(
            name: nil, count: 0, participants: participants, timeout: timeout, timer: timer,
            metrics: HarmonizerMetrics(telemetry))
        armTimeout()
    }

    /// Makes a harmonizer whose timeout is not armed yet: the caller calls ``armTimeout()``
    /// once it is ready to be told about the outcome. `name` only improves error messages.
    /// `participants` is `nil` for a counting harmonizer; a list, even empty, makes one of named
    /// participants. The timeout is armed on `timer` (shared with other harmonizers of a registry).
    package init(
        name: String?,
        count: Int,
        participants: [String]?,
        timeout: Duration?,
        timer: DeadlineTimer?,
        metrics: HarmonizerMetrics? = nil
    ) throws(HarmonizerError) {
        guard count >= 0 else { throw .negativeCount(count, name: name) }
        if let timeout, timeout < .zero { throw .negativeTimeout(timeout, name: name) }
        precondition(timeout == nil || timer != nil, "a timeout needs a timer")
        self.counter = HarmonizerCounter(count + (participants?.count ?? 0))
        self.waitsForNamedParticipants = participants != nil
        self.state = Lock(HarmonizerStateMachine(participants: participants ?? []))
        self.timeout = timeout
        self.timer = timer
        self.metrics = metrics
    }

    /// A timer of its own for a harmonizer made alone, only if it has a timeout.
    private static func timer(_ timeout: Duration?, _ clock: some Clock<Duration>) -> DeadlineTimer? {
        timeout == nil ? nil : DeadlineTimer(clock: ClockSource(clock).purpose(.harmonizerTimeout))
    }

    // MARK: - Counting

    /// The current count: how many more ``leave()`` calls complete the harmonizer. Zero once it has ended.
    public var count: Int { counter.value }

    /// The named participants it still waits for, sorted; a name expected twice appears
    /// twice until it has left twice. Empty for anonymous counting, and once the outcome is
    /// decided (a timeout's outcome carries them instead).
    ///
    /// ```swift
    /// let page = try Harmonizer(participants: ["avatar", "feed"])
    /// page.leave("feed")
    /// logger.warning("still waiting for \(page.missingParticipants)")  // ["avatar"]
    /// ```
    public var missingParticipants: [String] {
        state.withLock { $0.missing }
    }

    /// Counts one participant up. Returns `false`, changing nothing, once the outcome is
    /// decided, or when the harmonizer waits for named participants (use ``enter(_:)``).
    @discardableResult
    public func enter() -> Bool {
        guard !waitsForNamedParticipants else { return false }
        return counter.increment() != nil
    }

    /// Counts `participant` up, remembering its name so a timeout can report it missing.
    /// Returns `false`, changing nothing, once the outcome is decided.
    @discardableResult
    public func enter(_ participant: String) -> Bool {
        let readers = state.withLock { machine -> [WaiterSet<Void>.Waiter]? in
            guard machine.isWaiting, let count = counter.increment() else { return nil }
            return machine.enter(participant, count: count)
        }
        for reader in readers ?? [] { reader.resume(returning: ()) }
        return readers != nil
    }

    /// Counts one participant down; the one that reaches zero completes the harmonizer.
    /// Returns `false`, changing nothing, when the count is already zero or the outcome is
    /// decided — an extra or late call is harmless — and when the harmonizer waits for named
    /// participants, which only ``leave(_:)`` counts down.
    @discardableResult
    public func leave() -> Bool {
        // One check of a constant, the atomic, one branch; the rest out of line.
        guard !waitsForNamedParticipants else { return false }
        let old = counter.subtract()
        if old > 1 { return true }
        return leave(afterSubtractingFrom: old).didCount
    }

    /// Counts `participant` down. Returns `false`, changing nothing, when `participant` is not
    /// present (it never arrived by that name, or already left) or the outcome is decided.
    @discardableResult
    public func leave(_ participant: String) -> Bool {
        tryLeave(participant: participant).didCount
    }

    /// Counts down, saying why a count-down that did not count was refused.
    package func tryLeave(participant: String?) -> LeaveResult {
        guard let participant else { return tryLeaveAnonymously() }
        let (result, readers, decision) = state.withLock {
            machine -> (LeaveResult, [WaiterSet<Void>.Waiter], HarmonizerStateMachine.Decision?) in
            guard machine.isWaiting else { return (.finished, [], nil) }
            guard machine.isPresent(participant) else { return (.participantAbsent, [], nil) }
            switch counter.decrement() {
            case .decremented(let remaining):
                return (.counted, machine.leave(participant, count: remaining), nil)
            case .reachedZero:
                let readers = machine.leave(participant, count: 0)
                return (.completed, readers, end(.completed, &machine))
            case .refusedAtZero:
                return (.counterAtZero, [], nil)
            case .refusedClosed:
                // An anonymous count-down closed the counter and is on its way to complete.
                return (.finished, [], nil)
            }
        }
        for reader in readers { reader.resume(returning: ()) }
        if let decision { apply(decision) }
        return result
    }

    /// An anonymous count-down: one check of a constant, the counter's atomic and one branch
    /// when participants remain expected. Inlined into a registry handle's `leave()`, whose
    /// cost is this and nothing more.
    @inline(__always)
    package func tryLeaveAnonymously() -> LeaveResult {
        guard !waitsForNamedParticipants else { return .anonymous }
        let old = counter.subtract()
        if old > 1 { return .counted }
        return leave(afterSubtractingFrom: old)
    }

    /// The atomic step of an anonymous count-down, for the registry's count-down by name:
    /// `nil`, doing nothing, when the harmonizer waits for named participants; otherwise the
    /// count before the subtract. Above 1 that is the whole count-down; otherwise the caller
    /// finishes it with ``leave(afterSubtractingFrom:)``, holding a strong reference (the
    /// completion it may run is user code, which may drop every other reference).
    @inline(__always)
    package func subtractAnonymously() -> Int? {
        guard !waitsForNamedParticipants else { return nil }
        return counter.subtract()
    }

    /// Out of line, so the count-downs that leave participants expected stay short: refused,
    /// or the one that may complete.
    @inline(never)
    package func leave(afterSubtractingFrom old: Int) -> LeaveResult {
        switch counter.decrement(from: old) {
        case .decremented: return .counted
        case .reachedZero:
            decide(.completed)
            return .completed
        case .refusedAtZero: return .counterAtZero
        case .refusedClosed: return .finished
        }
    }

    // MARK: - Data

    /// Keeps `value` under `key` until the outcome, which hands over everything stashed.
    /// Returns `false`, keeping nothing, once the outcome is decided.
    @discardableResult
    public func stash(_ value: some Sendable, as key: String) -> Bool {
        state.withLock { $0.stash(value, forKey: key) }
    }

    /// Keeps `value` under a typed `key` until the outcome, which hands over everything stashed.
    /// Returns `false`, keeping nothing, once the outcome is decided.
    @discardableResult
    public func stash<Value>(_ value: Value, as key: HarmonizerKey<Value>) -> Bool {
        stash(value, as: key.name)
    }

    // MARK: - Ending

    /// Ends the harmonizer as ``Outcome/cancelled``: the stash is released and waiters are
    /// told. Returns `false`, doing nothing, if the outcome was already decided.
    @discardableResult
    public func cancel() -> Bool {
        decide(.cancelled)
    }

    /// Waits for the outcome.
    ///
    /// Cancelling the waiting task cancels the harmonizer — the waiter owns it, as a screen's
    /// task owns the loads it waits for — and then returns whatever outcome won (normally
    /// ``Outcome/cancelled``). To wait without owning it, use ``onOutcome(on:_:)``.
    public var outcome: Outcome {
        get async {
            // Published once the decision has been carried out; the machine keeps the waiters,
            // and the race with the waiting task's cancellation is the kit's.
            if await state.wait(for: \.publication) == nil {
                cancel()
                await state.waitIgnoringCancellation(for: \.publication)
            }
            guard let outcome = state.withLock({ $0.publishedOutcome }) else {
                preconditionFailure("a harmonizer's outcome is published only once it is decided")
            }
            return outcome
        }
    }

    /// Calls `handler` on `target` with the outcome once it is decided (at once if it already is).
    public func onOutcome(on target: CallbackTarget = .mainActor, _ handler: @escaping @Sendable (Outcome) -> Void) {
        let observer = HarmonizerStateMachine.Observer(target: target, handler: handler)
        guard let outcome = state.withLock({ $0.observe(observer) }) else { return }
        target.dispatch { handler(outcome) }
    }

    /// The named participants' arrivals and departures, then the outcome, from the start.
    public var events: EventSequence<HarmonizerEvent> {
        EventSequence(source: self, startIndex: 0)
    }

    /// Whether the outcome is decided, or about to be by the count-down that reached zero.
    package var isFinished: Bool { counter.isClosed }

    /// Starts the timeout, if there is one, on the timer's clock. The deadline is cancelled
    /// as soon as the outcome is decided, so it never outlives the harmonizer's work (and a
    /// timer with nothing else pending stops sleeping at once).
    package func armTimeout() {
        guard let timeout, let timer else { return }
        let token = timer.schedule(after: timeout) { self.decide(.timedOut) }
        if !state.withLock({ $0.arm(token) }) { timer.cancel(token) }
    }

    @discardableResult
    private func decide(_ reason: HarmonizerStateMachine.Reason) -> Bool {
        guard let decision = state.withLock({ end(reason, &$0) }) else { return false }
        apply(decision)
        return true
    }

    /// Decides the outcome under the lock; ``apply(_:)`` carries it out after unlocking.
    private func end(
        _ reason: HarmonizerStateMachine.Reason, _ machine: inout HarmonizerStateMachine
    ) -> HarmonizerStateMachine.Decision? {
        guard let decision = machine.decide(reason) else { return nil }
        counter.close()
        return decision
    }

    private func apply(_ decision: HarmonizerStateMachine.Decision) {
        let outcome = decision.outcome
        // Before anyone hears of the outcome, so whoever awaited it sees it counted.
        metrics?.record(outcome)
        if let token = decision.timeout { timer?.cancel(token) }
        // The outcome's event, and the journal's end: after every event of an earlier
        // transition, since none comes once the outcome is decided.
        for reader in state.withLock({ $0.journalOutcome() }) { reader.resume(returning: ()) }
        // Observers first, so an immediate one (the registry freeing the name) has run by
        // the time any waiter of `outcome` wakes up.
        for observer in decision.observers {
            observer.target.dispatch { observer.handler(outcome) }
        }
        // Last, so whoever awaited the outcome finds it counted, journaled and told.
        for waiter in state.withLock({ $0.publish() }) { waiter.resume(returning: ()) }
    }
}

extension Harmonizer: EventBatchSource {
    /// The events from `index` on, read under the harmonizer's lock, waiting until there is
    /// at least one.
    package func batch(
        from index: inout Int, limit: Int, isolation: isolated (any Actor)?
    ) async -> [HarmonizerEvent] {
        await state.batch(from: &index, limit: limit, journal: \.journal)
    }
}
