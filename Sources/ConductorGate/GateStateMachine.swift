/// Everything a ``RequestGate`` decides, as one value with no concurrency in it, in three parts
/// embedded in it: the flights of requests and the callers on them (a ``FlightTable``), the
/// slots (a ``SchedulerStateMachine``), and the credential with its refresh and the requests
/// parked behind it (a ``GateCredentialMachine``). This value decides what crosses the parts.
///
/// Every operation is one transition of the gate: it returns one action, appends the events
/// it recorded to `events` (which the storage journals in the same critical section), and
/// never resumes, starts or calls anything — the storage does that once its lock is released.
/// A transition that gives a slot back may let queued attempts start; it returns them in its
/// action (`slotStarts`), each with the first decision at its attempt taken in that transition, for
/// the storage to resume.
struct GateStateMachine<Handles: GateHandles> {
    typealias Credential = Handles.Credential
    typealias Credentials = GateCredentialMachine<Credential, Parked>
    typealias Priority = RequestPriority
    typealias Failure = GateFailure

    typealias Flights = FlightTable<GateFlightKey, Handles.Caller, Handles.Work>
    typealias AbandonedWaits = GateAbandonedWaits<Handles>
    typealias ShutdownFlights = GateShutdownFlights<Handles>
    typealias RefreshEndStep = GateRefreshEndStep<Handles>
    typealias ReplaceStep = GateReplaceStep<Handles>

    /// What ``open(_:request:name:priority:needsAuthorization:callerID:caller:work:events:)``
    /// decided for a caller.
    enum OpenAction: Sendable {
        /// Joined the flight in the air: wait for its outcome.
        case joined
        /// A new flight, holding the caller: start its work once the lock is released.
        case opened
        /// Refused before any flight opened; the caller is not kept.
        case refused(Failure)
    }

    typealias Slot = GateSlot<Credential>
    typealias AttemptDecision = Slot.Decision
    typealias SlotGrant = Slot.Grant

    typealias SlotClaimant = GateSlotClaimant

    /// A claimant queued for a slot, as the slot machine keeps it. Plain data (no credential),
    /// so the slot machine's lanes copy it bit for bit.
    struct QueuedSlot: Sendable {
        var waiter: Handles.SlotWaiter
        /// The attempt, for the first decision once a slot is free (`nil`: the refresh).
        var attempt: GateQueuedAttempt?
        /// The slot as queued: its priority and the failure epoch it queued in.
        var priority: Priority
        var epoch: Int
    }
    /// A queued claimant that starts now: resume `waiter` with `slot`, whose first decision (for
    /// an attempt) the starting transition took.
    struct SlotStart: Sendable {
        var waiter: Handles.SlotWaiter
        var slot: Slot
    }

    /// What ``takeSlotNow(for:isCancelled:judges:events:)`` decided.
    enum SlotNowAction: Sendable {
        case granted(Slot)
        /// No slot is free without overtaking: queue with ``queue(_:id:waiter:judges:events:)``.
        case busy
        case shutDown
    }

    /// What ``queue(_:id:waiter:judges:events:)`` decided.
    enum QueueAction: Sendable {
        /// A slot was free after all: go on with it.
        case start(Slot)
        /// Queued; a later transition's `slotStarts` holds the waiter, with the slot and its
        /// first decision.
        case enqueued(Slot)
        case shutDown
        /// The attempt's flight has ended (its last caller left, or its deadline passed): its
        /// task is cancelled, so it queues for nothing.
        case flightEnded
    }

    typealias NextAttempt = GateNextAttempt

    /// A request (or a ``RequestGate/refresh()`` caller: no `next` attempt) parked behind the
    /// refresh.
    struct Parked: Sendable {
        var waiter: Handles.Parked
        var next: NextAttempt?
    }

    /// The credential, its refresh and the parked requests: driven only through this machine's
    /// transitions; the storage reads it (version, parked count) for its hooks.
    private(set) var credentials: Credentials
    private(set) var slots: SchedulerStateMachine<QueuedSlot>
    private(set) var flights = Flights()

    init(credentials: Credentials, slots: SchedulerStateMachine<QueuedSlot>) {
        self.credentials = credentials
        self.slots = slots
    }

    // MARK: - Flights

    /// A caller sends a request: it joins the flight `key` names if one is in the air (raising
    /// it, and its queued attempt, to the caller's priority), or opens one with `work`.
    mutating func open(
        _ key: GateFlightKey, request id: UInt64, name: String, priority: Priority, needsAuthorization: Bool,
        callerID: UInt64, caller: Handles.Caller, work: @autoclosure () -> Handles.Work,
        events: inout [GateEvent]
    ) -> OpenAction {
        if let joined = flights.join(key, callerID: callerID, caller: caller, priority: priority) {
            if case .raised(let queued?, let target) = joined { slots.raise(id: queued, to: target) }
            events.append(.coalesced(name: name))
            return .joined
        }
        if let refused = credentials.refusal(needsAuthorization: needsAuthorization) { return .refused(refused) }
        events.append(.initial(request: id, name: name, priority: priority))
        flights.open(key, request: id, callerID: callerID, caller: caller, priority: priority, work: work())
        return .opened
    }

    /// Caller `callerID` of flight `key` was cancelled: it leaves; the last caller to leave
    /// ends the flight as cancelled.
    mutating func leave(_ key: GateFlightKey, caller callerID: UInt64, events: inout [GateEvent])
        -> Flights.LeaveAction
    {
        let action = flights.leave(key, caller: callerID)
        if case .ended(_, let flight) = action { events.append(.failure(request: flight.request, code: .cancelled)) }
        return action
    }

    /// Request `id`'s flight ended with `end`: journaled, and the flight is returned (its callers
    /// to wake with its outcome, its task) — `nil` when the flight ended already (its last caller left, or a
    /// shutdown took it), which then decided its outcome.
    mutating func settle(_ key: GateFlightKey, request id: UInt64, end: GateEvent, events: inout [GateEvent])
        -> Flights.Flight?
    {
        guard let flight = flights.end(key, request: id) else { return nil }
        events.append(end)
        return flight
    }

    // MARK: - Slots

    /// A slot for `claimant` if one is free without overtaking anyone, with the first decision at
    /// an attempt taken in the same transition (see ``decide(request:attempt:epoch:needsAuthorization:isCancelled:judges:judged:events:)``).
    mutating func takeSlotNow(
        for claimant: SlotClaimant, isCancelled: Bool, judges: Bool, events: inout [GateEvent]
    ) -> SlotNowAction {
        let priority = self.priority(of: claimant)
        switch slots.startImmediately(priority) {
        case nil: return .shutDown
        case false?: return .busy
        case true?:
            var slot = Slot(priority: priority, epoch: credentials.failureEpoch)
            if case .attempt(_, let id, let number, let needsAuthorization) = claimant {
                slot.decision = decide(
                    request: id, attempt: number, epoch: slot.epoch, needsAuthorization: needsAuthorization,
                    isCancelled: isCancelled, judges: judges, judged: nil, events: &events)
            }
            return .granted(slot)
        }
    }

    /// Queues `claimant` for a slot as entry `id`, kept as `waiter` until a transition lets it
    /// start; that transition takes the first decision at an attempt (asking for the judge's
    /// verdict first if `judges`), so the attempt is resumed once, knowing whether it sends.
    mutating func queue(
        _ claimant: SlotClaimant, id: UInt64, waiter: Handles.SlotWaiter, judges: Bool, events: inout [GateEvent]
    ) -> QueueAction {
        // An attempt's flight names its queued entry, so the transition that ends the flight
        // early takes the entry out (``abandonWaits(of:events:)``): the attempt's task needs
        // no cancellation handler of its own. Recorded before submitting (in the lookup that
        // reads the flight's priority): an entry that starts at once leaves a stale id, which
        // finds nothing (entry ids are never reused).
        let priority: Priority
        var attempt: GateQueuedAttempt?
        switch claimant {
        case .attempt(let key, let request, let number, let needsAuthorization):
            guard let flightPriority = flights.queued(key, request: request, slot: id) else { return .flightEnded }
            priority = flightPriority
            attempt = GateQueuedAttempt(
                request: request, number: number, needsAuthorization: needsAuthorization, judges: judges)
        case .refresh:
            priority = .unique
        }
        let slot = Slot(priority: priority, epoch: credentials.failureEpoch)
        let entry = QueuedSlot(waiter: waiter, attempt: attempt, priority: slot.priority, epoch: slot.epoch)
        switch slots.submit(id: id, priority: slot.priority, payload: entry) {
        case .start: return .start(slot)
        case .rejected: return .shutDown
        case .enqueued:
            if let attempt { events.append(.queued(request: attempt.request, priority: slot.priority)) }
            return .enqueued(slot)
        }
    }

    /// Queued entry `id` was cancelled: its waiter, and the entries its leaving lets start.
    mutating func cancelQueued(
        id: UInt64, events: inout [GateEvent]
    ) -> (cancelled: Handles.SlotWaiter, started: [SlotStart])? {
        guard let (cancelled, started) = slots.cancel(id: id) else { return nil }
        return (cancelled.waiter, start(started, events: &events))
    }

    /// Flight `flight` ended early (its last caller left, or its deadline passed) while its request
    /// may be queued for a slot or parked behind the refresh: each is taken out in the same
    /// transition, so the request, whose task is cancelled next, is resumed as cancelled, and no
    /// slot or refresh's end ever wakes it. Its task then needs no cancellation handler.
    mutating func abandonWaits(of flight: Flights.Flight, events: inout [GateEvent]) -> AbandonedWaits {
        var abandoned = AbandonedWaits(parked: credentials.cancelParked(request: flight.request)?.waiter)
        if let id = flight.queuedSlot, let (cancelled, started) = slots.cancel(id: id) {
            abandoned.slot = cancelled.waiter
            abandoned.started = start(started, events: &events)
        }
        return abandoned
    }

    /// Gives a slot back; returns the waiters that start now, each with its first decision taken.
    mutating func releaseSlot(_ priority: Priority, events: inout [GateEvent]) -> [SlotStart] {
        start(slots.finish(unique: priority == .unique), events: &events)
    }

    /// Queued claimants that start now: the first decision at each attempt is taken here, in the
    /// transition that gives it the slot (recording its `running` if it sends). Its task's
    /// cancellation is not known here: a cancellation that comes this late reaches it on the
    /// wire, as one that comes just after a free slot's decision does.
    private mutating func start(_ entries: [QueuedSlot], events: inout [GateEvent]) -> [SlotStart] {
        entries.map { entry in
            var slot = Slot(priority: entry.priority, epoch: entry.epoch)
            if let attempt = entry.attempt {
                slot.decision = decide(
                    request: attempt.request, attempt: attempt.number, epoch: slot.epoch,
                    needsAuthorization: attempt.needsAuthorization, isCancelled: false, judges: attempt.judges,
                    judged: nil, events: &events)
            }
            return SlotStart(waiter: entry.waiter, slot: slot)
        }
    }

    /// The priority `claimant` queues with.
    private func priority(of claimant: SlotClaimant) -> Priority {
        switch claimant {
        case .attempt(let key, _, _, _): flights.priority(of: key) ?? .default
        case .refresh: .unique
        }
    }

    // MARK: - Authorizing

    /// Decides attempt `attempt` of request `id` in its slot: send (recorded as `running` in this transition, so
    /// the journal never shows a send with a version after the `refreshStarted` that replaces
    /// it), fail, judge the credential first, or park. `judged` is the judge's verdict on a
    /// version, from an earlier decision.
    mutating func decide(
        request id: UInt64, attempt: Int, epoch: Int, needsAuthorization: Bool, isCancelled: Bool, judges: Bool,
        judged: (version: Int, stale: Bool)?, events: inout [GateEvent]
    ) -> AttemptDecision {
        if isCancelled { return .cancelledNow }
        guard let action = credentials.authorizeWithoutParking(epoch: epoch, needsAuthorization: needsAuthorization)
        else { return .park }
        switch action {
        case .send(let credential, let version):
            if judges, let credential {
                guard let judged, judged.version == version else { return .judge(credential, version: version) }
                if judged.stale { return .stale(version: version) }
            }
            Self.recordRunning(credential, version: version, request: id, attempt: attempt, events: &events)
            return .send(credential, version: version)
        case .fail(let failure):
            failure.record(in: &events)
            return .failNow(failure)
        }
    }

    /// A request goes out with `credential`. A request without authorization carries no
    /// credential: version 0.
    private static func recordRunning(
        _ credential: Credential?, version: Int, request id: UInt64, attempt: Int, events: inout [GateEvent]
    ) {
        events.append(.running(request: id, attempt: attempt, credentialVersion: credential == nil ? 0 : version))
    }

    // MARK: - Parking

    typealias ParkReason = GateParkReason

    /// Parks request `id` of flight `key`, which holds a slot of `priority` and found a refresh
    /// running or no credential yet (the first request then starts the refresh), giving its
    /// slot back in the same transition; unless the state changed since its look, and it may
    /// send or must fail after all. Attempt `attempt` is the one it makes once woken.
    mutating func park(
        _ key: GateFlightKey, request id: UInt64, attempt: Int, epoch: Int, needsAuthorization: Bool,
        slot priority: Priority, waiter: Handles.Parked, now: Duration, events: inout [GateEvent]
    ) -> ParkDecision {
        let parked = Parked(waiter: waiter, next: NextAttempt(key: key, request: id, number: attempt))
        switch credentials.authorize(
            request: id, epoch: epoch, needsAuthorization: needsAuthorization, waiter: parked, now: now)
        {
        case .send(let credential, let version):
            // The state changed since the look (a refresh ended, a sign-in). A credential that
            // came meanwhile is sent unjudged: it is the one the refresh or the sign-in just
            // delivered.
            Self.recordRunning(credential, version: version, request: id, attempt: attempt, events: &events)
            return ParkDecision(resumption: .send(credential, version: version))
        case .fail(let failure):
            failure.record(in: &events)
            return ParkDecision(resumption: .failNow(failure))
        case .park:
            events.append(.parked(request: id, credentialVersion: credentials.version))
            return ParkDecision(resumption: nil, slotStarts: releaseSlot(priority, events: &events))
        case .parkAndRefresh(let flight, let old):
            events.append(.refreshStarted(fromVersion: flight.fromVersion, request: id))
            events.append(.parked(request: id, credentialVersion: credentials.version))
            return ParkDecision(
                resumption: nil, refresh: (flight, old), slotStarts: releaseSlot(priority, events: &events))
        }
    }

    /// The server rejected credential `version` of request `id` of flight `key` (or it was
    /// judged stale before sending: `reason`), which holds a slot of `priority`; the slot is
    /// given back in the same transition. With a `waiter`, the request parks if a refresh runs
    /// or starts (and makes attempt `nextAttempt` once woken); without (no attempt left), it
    /// only starts the refresh the rejection calls for.
    mutating func rejected(
        _ key: GateFlightKey, request id: UInt64, version: Int, nextAttempt: Int, slot priority: Priority,
        reason: ParkReason, waiter: Handles.Parked?, now: Duration, events: inout [GateEvent]
    ) -> ParkDecision {
        let waiter = waiter.map {
            Parked(waiter: $0, next: NextAttempt(key: key, request: id, number: nextAttempt))
        }
        let waits = waiter != nil
        let parkedEvent: GateEvent =
            switch reason {
            case .rejected: .redirect(request: id, credentialVersion: version)
            case .stale: .parked(request: id, credentialVersion: version)
            }
        var step: ParkDecision
        switch credentials.rejected(
            request: id, sentVersion: version, waiter: waiter, now: now, judgedStale: reason == .stale)
        {
        case .resend:
            step = ParkDecision(resumption: .proceed)
        case .fail(let failure):
            failure.record(in: &events)
            step = ParkDecision(resumption: .fail(failure))
        case .park:
            if waits { events.append(parkedEvent) }
            step = ParkDecision(resumption: waits ? nil : .proceed)
        case .parkAndRefresh(let flight, let old):
            events.append(.refreshStarted(fromVersion: flight.fromVersion, request: id))
            if waits { events.append(parkedEvent) }
            step = ParkDecision(resumption: waits ? nil : .proceed, refresh: (flight, old))
        }
        // Given back after the decision: the attempts it lets start look at the credential as
        // the rejection left it (refreshing, so none carries the rejected one).
        step.slotStarts = releaseSlot(priority, events: &events)
        return step
    }

    /// ``rejected(_:request:version:nextAttempt:slot:reason:waiter:now:events:)`` for a request
    /// whose task was cancelled before the transition: it gives its slot back and does not
    /// wait, but the refresh a rejection calls for still starts (single-flight, as for any
    /// rejection): the credential is known bad, so the next request must not carry it to the
    /// server again. A credential merely judged stale starts nothing: no server refused it yet.
    mutating func rejectedWhileCancelled(
        request id: UInt64, version: Int, slot priority: Priority, reason: ParkReason, now: Duration,
        events: inout [GateEvent]
    ) -> ParkDecision {
        guard reason == .rejected else {
            return ParkDecision(resumption: .cancelled, slotStarts: releaseSlot(priority, events: &events))
        }
        // Without a waiter, the request's key and next attempt are never read.
        var step = rejected(
            .request(id), request: id, version: version, nextAttempt: 0, slot: priority, reason: reason, waiter: nil,
            now: now, events: &events)
        step.resumption = .cancelled
        return step
    }

    // MARK: - The refresh

    /// A refresh asked for from outside (``RequestGate/refresh()``) by `caller`: joins the
    /// running one or starts one, parking `waiter` until it ends.
    mutating func refreshNow(caller id: UInt64, waiter: Handles.Parked, now: Duration, events: inout [GateEvent])
        -> ParkDecision
    {
        switch credentials.refreshNow(caller: id, waiter: Parked(waiter: waiter, next: nil), now: now) {
        case .join:
            return ParkDecision(resumption: nil)
        case .start(let flight, let old):
            events.append(.refreshStarted(fromVersion: flight.fromVersion, request: nil))
            return ParkDecision(resumption: nil, refresh: (flight, old))
        case .fail(let failure):
            failure.record(in: &events)
            return ParkDecision(resumption: .fail(failure))
        }
    }

    /// Refresh `flight` ended with `result`, giving back the `unique` slot it held if
    /// `releasingSlot`.
    ///
    /// The `unique` slot is given back after the refresh settled the credential, so the
    /// attempts queued behind the refresh that start now are authorized (their first decision) with
    /// the new credential in this transition, after `refreshSucceeded`, or fail with the
    /// refresh's failure.
    ///
    /// After a success, the parked requests' next attempts take the slots that are free without
    /// overtaking anyone queued (the attempts that queued behind the refresh start first, as
    /// they did when the woken requests queued again), highest priority first and in the order
    /// they parked within a priority, and are authorized with the new credential in this
    /// transition: each is resumed once, holding its slot, with its `running` recorded here,
    /// after `refreshSucceeded`. The others queue for a slot again once woken.
    mutating func refreshEnded(
        _ flight: GateRefreshFlight, _ result: RefreshResult, releasingSlot: Bool, events: inout [GateEvent]
    ) -> RefreshEndStep {
        var step = RefreshEndStep()
        let action: Credentials.RefreshEndAction =
            switch result {
            case .succeeded(let credential): credentials.refreshSucceeded(flight, with: credential)
            case .failed(let failure): credentials.refreshFailed(flight, failure)
            case .cancelled: .discard
            }
        guard case .settle(let waiters, let version, let failure) = action else {
            if releasingSlot { step.slotStarts = releaseSlot(.unique, events: &events) }
            return step
        }
        if failure != nil {
            events.append(.refreshFailed(fromVersion: flight.fromVersion))
        } else {
            events.append(.refreshSucceeded(version: version))
        }
        if releasingSlot { step.slotStarts = releaseSlot(.unique, events: &events) }
        step.failure = failure
        step.settled = true
        step.released = waiters.compactMap { $0.next?.request }
        if let failure {
            step.waiters = waiters.map { ($0.waiter, Resumption.fail(failure)) }
        } else {
            step.waiters = handSlots(to: waiters, events: &events)
        }
        return step
    }

    /// The slots free without overtaking, given to `parked` (woken by a refresh's success) by
    /// priority, each authorized in the same transition; see
    /// ``refreshEnded(_:_:releasingSlot:events:)``.
    private mutating func handSlots(
        to parked: [Parked], events: inout [GateEvent]
    ) -> [(waiter: Handles.Parked, resumption: Resumption)] {
        var woken: [(waiter: Handles.Parked, resumption: Resumption)] = parked.map { ($0.waiter, .proceed) }
        // The flight's priority, now (a caller may have joined since it parked); nil for a
        // refresh() caller and for a request whose flight already ended (its task is
        // cancelled: it goes on only to find that out).
        var claims: [(index: Int, priority: Priority, next: NextAttempt)] = []
        for (index, entry) in parked.enumerated() {
            guard let next = entry.next, let flight = flights.flight(next.key, of: next.request) else { continue }
            claims.append((index, flight.priority, next))
        }
        // Stable: within a priority, the order they parked in.
        claims.sort { $0.priority > $1.priority || ($0.priority == $1.priority && $0.index < $1.index) }
        for claim in claims {
            guard slots.startImmediately(claim.priority) == true else { break }
            var slot = Slot(priority: claim.priority, epoch: credentials.failureEpoch)
            // Parked requests all need the credential (one that does not never parks), and the
            // credential the refresh just delivered is sent unjudged, as in `park`.
            slot.decision = decide(
                request: claim.next.request, attempt: claim.next.number, epoch: slot.epoch,
                needsAuthorization: true, isCancelled: false, judges: false, judged: nil, events: &events)
            woken[claim.index].resumption = .granted(slot)
        }
        return woken
    }

    // MARK: - Leaving and backing off

    /// Parked request `id`'s task was cancelled: its waiter, to resume as cancelled, if it was
    /// still parked (the refresh's end or a replacement may have woken it first).
    mutating func cancelParked(request id: UInt64) -> Handles.Parked? {
        credentials.cancelParked(request: id)?.waiter
    }

    /// Attempt `attempt` of request `id`, holding a slot of `priority`, failed and will be sent
    /// again after `retryAfter` (the server's) or else the backoff of `schedule` with jitter: records
    /// `retry` and gives the slot back.
    mutating func backOff(
        request id: UInt64, attempt: Int, retryAfter: Duration?, schedule: RetrySchedule, slot priority: Priority,
        events: inout [GateEvent]
    ) -> (delay: Duration, slotStarts: [SlotStart]) {
        let delay = retryAfter ?? credentials.backoffDelay(afterAttempt: attempt, on: schedule)
        events.append(.retry(request: id, attempt: attempt, delay: delay))
        return (delay, releaseSlot(priority, events: &events))
    }

    // MARK: - Credentials from outside

    /// A sign-in, sign-out or shutdown, as one transition: a running refresh is replaced
    /// (`refreshCancelled`), the parked requests wake, and a shutdown ends every flight first
    /// (each end journaled before its callers wake). Nothing is decided twice: after a shutdown,
    /// every replacement finds nothing to do.
    mutating func replace(_ replacement: Replacement, events: inout [GateEvent]) -> ReplaceStep {
        var step = ReplaceStep()
        let action: Credentials.ReplaceAction?
        var event: GateEvent?
        switch replacement {
        case .signIn(let credential):
            action = credentials.signIn(credential)
            event = action.map { .signedIn(version: $0.version) }
        case .signOut:
            action = credentials.signOut()
            event = .signedOut
        case .shutdown:
            step.flights = shutDownFlights(events: &events)
            action = credentials.shutdown()
            step.finishesJournal = action != nil
        }
        guard let action else { return step }
        if let cancelled = action.cancelledRefresh {
            events.append(.refreshCancelled(fromVersion: cancelled.fromVersion))
            step.cancelledRefresh = cancelled
        }
        if let event { events.append(event) }
        step.parked = action.waiters.map(\.waiter)
        step.failure = action.failure
        return step
    }

    // MARK: - Shutdown

    /// Ends every flight once with `shutDown` (journaled before its callers wake) and drops
    /// every queued slot: the flights' part of ``replace(_:events:)``'s shutdown.
    private mutating func shutDownFlights(events: inout [GateEvent]) -> ShutdownFlights {
        var ended = ShutdownFlights()
        guard !credentials.isShutDown else { return ended }
        for flight in flights.removeAll() {
            events.append(.failure(request: flight.request, code: .shutDown))
            ended.callers += flight.callers.map(\.caller)
            ended.work.append(flight.work)
        }
        ended.droppedSlots = slots.shutdown().map(\.waiter)
        return ended
    }
}
