/// The lock of a ``RequestGate`` (over a ``GateLockedState``: the machine and the journal) and
/// one method per machine operation: each takes the lock once, asks the machine, journals its
/// events in the same critical section, and once the lock is released carries out what the
/// machine decided (resumes, task starts and cancels, the logger and the instruments). The
/// algorithms that call these operations are a ``GateRequest``'s and a ``GateRefreshRunner``'s.
///
/// The journal's order is the order of the transitions, and no second lock is ever taken while
/// this one is held. A value a continuation is resumed with from another task goes through a
/// `Handoff`, so ThreadSanitizer sees the hand-over (a refreshed credential in a slot grant).
/// Not generic (the credential is an ``ErasedCredential``), so a request looks up no generic
/// metadata at run time, a large share of a generic storage's cost.
final class GateStorage: Sendable {
    /// What the gate's machine keeps for the storage to resume or cancel.
    enum Handles: GateHandles {
        typealias Credential = ErasedCredential
        typealias Parked = WaiterSet<Handoff<Machine.Resumption>>.Waiter
        typealias Caller = WaiterSet<Delivery>.Waiter
        typealias SlotWaiter = WaiterSet<Handoff<Machine.SlotGrant>>.Waiter
        typealias Work = GateFlightTask
    }

    typealias Machine = GateStateMachine<Handles>
    typealias Priority = RequestPriority

    typealias Delivery = GateDelivery
    typealias State = GateLockedState

    /// Spans and metrics, or `nil` when the configuration's telemetry records nothing.
    let instruments: GateInstruments?
    /// The log, when the gate has a logger.
    let requestLog: GateRequestLog?
    private let refreshRunner: GateRefreshRunner
    let state: Lock<State>

    init(
        machine: sending Machine, eventRetention: Int, requestLog: GateRequestLog?, instruments: GateInstruments?,
        refreshRunner: GateRefreshRunner
    ) {
        self.requestLog = requestLog
        self.instruments = instruments
        self.refreshRunner = refreshRunner
        self.state = Lock(State(machine: machine, journal: JournalBuffer(keepingNewest: eventRetention)))
    }

    var credentialVersion: Int { state.withLock { $0.machine.credentials.version } }

    /// The events journaled so far, oldest retained first.
    var recordedEvents: [GateEvent] { state.withLock { $0.journal.snapshot } }

    /// Runs one transition under the lock; the events it produced are journaled in the same
    /// critical section and carried out (readers woken, logger and instruments told) once it is
    /// released.
    @discardableResult
    func transition<T>(_ body: (inout sending State, inout [GateEvent]) -> sending T) -> sending T {
        let (result, effects) = state.withLock { state -> sending (T, GateTransitionEffects) in
            var events: [GateEvent] = []
            let result = body(&state, &events)
            return (result, state.commit(events))
        }
        carryOut(effects)
        return result
    }

    /// What a transition left to do, with no lock held.
    func carryOut(_ effects: GateTransitionEffects) {
        // First: whoever this wakes finds the gauge as this transition left it.
        if let depth = effects.queueDepth { instruments?.record(depth) }
        if let resumed = effects.resumed {
            for start in resumed.slotStarts { start.waiter.resume(returning: Handoff(.started(start.slot))) }
            for reader in resumed.readers { reader.resume(returning: ()) }
            for hook in resumed.hooks { hook.resume() }
            for waiter in resumed.idle { waiter.resume(returning: true) }
        }
        guard !effects.events.isEmpty else { return }
        requestLog?.log(effects.events)
        instruments?.record(effects.events, releasedByRefresh: effects.releasedByRefresh)
    }

    // MARK: - Flights

    /// A caller sends request `id`: it joins the flight `key` names, or opens one, whose task
    /// runs `run(flightTask)` — which starts by ``GateFlightTask/settleOpening(_:)`` — once the
    /// lock is released, after `whenOpened`. Returns the flight's outcome, or how the caller
    /// left first.
    func open(
        _ key: GateFlightKey, request id: UInt64, name: String, priority: Priority, needsAuthorization: Bool,
        run: (GateFlightTask) -> @Sendable () async -> Void, whenOpened: () -> Void
    ) async -> Delivery {
        typealias Opened = (effects: GateTransitionEffects, task: GateFlightTask?)
        return await state.suspend(
            { (state: inout State, caller: WaiterSet<Delivery>.Waiter) -> SuspensionDecision<Delivery, Opened> in
                var events: [GateEvent] = []
                let task = GateFlightTask()
                switch state.machine.open(
                    key, request: id, name: name, priority: priority, needsAuthorization: needsAuthorization,
                    callerID: caller.id, caller: caller, work: task, events: &events)
                {
                case .joined: return .wait((state.commit(events), nil))
                case .refused(let failure): return .resume(.refused(failure), (state.commit(events), nil))
                case .opened:
                    // Carried out by the flight's task, first: the logger and the instruments hear
                    // of the request before any later event of it.
                    task.opening = state.commit(events)
                    return .wait((.none, task))
                }
            },
            cancelledNow: { state in (.cancelled, (state.commit([]), nil)) },
            perform: { opened in
                self.carryOut(opened.effects)
                guard let task = opened.task else { return }
                whenOpened()
                task.attach(Task(executorPreference: TaskPlacement.executor, operation: run(task)))
            },
            cancelled: { @Sendable [self] state, callerID in leave(&state, key: key, caller: callerID) })
    }

    /// A caller of flight `key` was cancelled: it leaves; the last caller to leave ends the
    /// flight as cancelled and cancels its task. `nil` when the flight ended first (the caller
    /// then has its outcome, so what it sees and what the journal says agree).
    private func leave(_ state: inout State, key: GateFlightKey, caller: UInt64) -> (@Sendable () -> Void)? {
        var events: [GateEvent] = []
        let (waiter, ended): (WaiterSet<Delivery>.Waiter, GateFlightTask?)
        var abandoned = AbandonedWaits()
        switch state.machine.leave(key, caller: caller, events: &events) {
        case .gone: return nil
        case .left(let left): (waiter, ended) = (left, nil)
        case .ended(let left, let flight):
            (waiter, ended) = (left, flight.work)
            abandoned = abandonWaits(&state, of: flight, events: &events)
        }
        let effects = state.commit(events)
        return { [self, ended, abandoned] in
            ended?.settleOpening(self)
            carryOut(effects)
            ended?.cancel()
            abandoned.resume()
            waiter.resume(returning: .cancelled)
        }
    }

    /// Request `id`'s flight ended with `result` (journaled as `end`): its callers are woken with
    /// it — unless the flight ended already (its last caller left, or a shutdown took it). Its
    /// deadline settles a flight from outside its task (`cancellingTask`): the task is then
    /// cancelled, and its attempts abandoned.
    func settle(
        _ key: GateFlightKey, request id: UInt64, end: GateEvent, result: Result<GateResponse, GateError>,
        cancellingTask: Bool = false
    ) {
        typealias Settled = (flight: Machine.Flights.Flight, abandoned: AbandonedWaits)
        let settled = transition { state, events -> Settled? in
            guard let flight = state.machine.settle(key, request: id, end: end, events: &events) else { return nil }
            // Settled from outside its task, the flight's attempt may be queued or parked.
            return (flight, cancellingTask ? abandonWaits(&state, of: flight, events: &events) : AbandonedWaits())
        }
        guard let (flight, abandoned) = settled else { return }
        let outcome = Handoff(result)
        for (_, caller) in flight.callers { caller.resume(returning: .ended(outcome)) }
        if cancellingTask { flight.work.cancel() }
        abandoned.resume()
    }

    /// What a flight that ended early was waiting in: its attempt's queued slot entry or its
    /// place behind the refresh, taken out in the transition that ended it, to resume as
    /// cancelled once the lock is released.
    struct AbandonedWaits: Sendable {
        var slot: Handles.SlotWaiter?
        var parked: Handles.Parked?

        func resume() {
            slot?.resume(returning: Handoff(.cancelled))
            parked?.resume(returning: Handoff(.cancelled))
        }
    }

    /// ``GateStateMachine/abandonWaits(of:events:)``, the entries it lets start kept to resume.
    private func abandonWaits(
        _ state: inout State, of flight: Machine.Flights.Flight, events: inout [GateEvent]
    ) -> AbandonedWaits {
        let abandoned = state.machine.abandonWaits(of: flight, events: &events)
        state.start(abandoned.started)
        return AbandonedWaits(slot: abandoned.slot, parked: abandoned.parked)
    }

    // MARK: - Slots

    /// Waits for a slot; the transition that gives it takes the attempt's first decision
    /// (asking for the judge's verdict first if `judges`).
    ///
    /// An attempt waits with no cancellation handler: while it waits, only the gate can cancel
    /// a flight's task (nobody else holds it), right after the transition that ended its
    /// flight, and that transition takes the attempt's queued entry out and resumes it as
    /// cancelled (``settle(_:request:end:result:cancellingTask:)``, a caller's leaving). An
    /// attempt whose task is cancelled already (user code on its task may do that), or whose
    /// flight has ended, is answered at once. The refresh, whose task a sign-in, sign-out or
    /// shutdown cancels, keeps one.
    func acquireSlot(for claimant: Machine.SlotClaimant, judges: Bool) async -> Machine.SlotGrant {
        // Most attempts find a slot free: no continuation, no cancellation handler.
        let fast = transition { state, events -> Machine.SlotGrant? in
            switch state.machine.takeSlotNow(
                for: claimant, isCancelled: Task.isCancelled, judges: judges, events: &events)
            {
            case .granted(let slot): .started(slot)
            case .busy: nil
            case .shutDown: .shutDown
            }
        }
        if let fast { return fast }
        typealias Grant = Handoff<Machine.SlotGrant>
        typealias Decision = SuspensionDecision<Grant, GateTransitionEffects>
        let decide = { (state: inout State, waiter: WaiterSet<Grant>.Waiter) -> Decision in
            // Cancelled before it waits (by user code on the flight's task, say): not queued.
            if Task.isCancelled { return .resume(Handoff(.cancelled), state.commit([])) }
            var events: [GateEvent] = []
            switch state.machine.queue(claimant, id: waiter.id, waiter: waiter, judges: judges, events: &events) {
            case .start(let slot): return .resume(Handoff(.started(slot)), state.commit(events))
            case .shutDown: return .resume(Handoff(.shutDown), state.commit(events))
            case .flightEnded: return .resume(Handoff(.cancelled), state.commit(events))
            case .enqueued: return .wait(state.commit(events))
            }
        }
        if case .attempt = claimant {
            return await state.suspendIgnoringCancellation(decide, perform: { effects in self.carryOut(effects) }).value
        }
        return await state.suspend(
            decide,
            cancelledNow: { state in (Handoff(.cancelled), state.commit([])) },
            perform: { effects in self.carryOut(effects) },
            cancelled: { @Sendable [self] state, waiterID in
                var events: [GateEvent] = []
                guard let removed = state.machine.cancelQueued(id: waiterID, events: &events) else { return nil }
                state.start(removed.started)
                let effects = state.commit(events)
                return { [self] in
                    carryOut(effects)
                    removed.cancelled.resume(returning: Handoff(.cancelled))
                }
            }
        ).value
    }

    func releaseSlot(_ priority: Priority) {
        transition { state, events in state.start(state.machine.releaseSlot(priority, events: &events)) }
    }

    /// Gives the slot back after a failed attempt; returns the delay before the next one.
    func backOff(
        request id: UInt64, attempt: Int, retryAfter: Duration?, schedule: RetrySchedule, slot: Priority
    ) -> Duration {
        transition { state, events -> Duration in
            let backOff = state.machine.backOff(
                request: id, attempt: attempt, retryAfter: retryAfter, schedule: schedule, slot: slot, events: &events)
            state.start(backOff.slotStarts)
            return backOff.delay
        }
    }

    // MARK: - Authorizing

    /// A decision on an attempt in its slot after the first (the judge's verdict `judged` came).
    func decide(
        request id: UInt64, attempt: Int, epoch: Int, needsAuthorization: Bool, judges: Bool,
        judged: (version: Int, stale: Bool)?
    ) -> Machine.AttemptDecision {
        transition { state, events in
            state.machine.decide(
                request: id, attempt: attempt, epoch: epoch, needsAuthorization: needsAuthorization,
                isCancelled: Task.isCancelled, judges: judges, judged: judged, events: &events)
        }
    }

    /// ``GateStateMachine/park(_:request:attempt:epoch:needsAuthorization:slot:waiter:now:events:)``.
    func park(
        _ key: GateFlightKey, request id: UInt64, attempt: Int, epoch: Int, needsAuthorization: Bool,
        slot: Priority, now: Duration
    ) async -> Machine.Resumption {
        await suspendParking(
            id: id, flight: key,
            whenCancelled: { _, _ in Machine.ParkDecision(resumption: .cancelledNow) },
            decide: { state, events, waiter in
                state.machine.park(
                    key, request: id, attempt: attempt, epoch: epoch, needsAuthorization: needsAuthorization,
                    slot: slot, waiter: waiter, now: now, events: &events)
            })
    }

    /// ``GateStateMachine/rejected(_:request:version:nextAttempt:slot:reason:waiter:now:events:)``
    /// (parking the request only if it `waits`), or its `rejectedWhileCancelled`.
    func rejected(
        _ key: GateFlightKey, request id: UInt64, version: Int, nextAttempt: Int, slot: Priority,
        reason: Machine.ParkReason, waits: Bool, now: Duration
    ) async -> Machine.Resumption {
        await suspendParking(
            id: id, flight: key,
            whenCancelled: { state, events in
                state.machine.rejectedWhileCancelled(
                    request: id, version: version, slot: slot, reason: reason, now: now, events: &events)
            },
            decide: { state, events, waiter in
                state.machine.rejected(
                    key, request: id, version: version, nextAttempt: nextAttempt, slot: slot, reason: reason,
                    waiter: waits ? waiter : nil, now: now, events: &events)
            })
    }

    /// ``GateStateMachine/refreshNow(caller:waiter:now:events:)``.
    func refreshNow(caller id: UInt64, now: Duration) async -> Machine.Resumption {
        await suspendParking(
            id: id, flight: nil,
            whenCancelled: { _, _ in Machine.ParkDecision(resumption: .cancelled) },
            decide: { state, events, waiter in
                state.machine.refreshNow(caller: id, waiter: waiter, now: now, events: &events)
            })
    }

    /// Runs `decide`, one transition, with a waiter for request `id`, and carries out what it
    /// decided once the lock is released: the events, the slots it freed, the refresh it
    /// started; the request goes on at once unless it parked. A request cancelled before the
    /// transition runs `whenCancelled` instead, and goes on at once.
    ///
    /// A request of `flight` (an attempt) parks with no cancellation handler: while it waits,
    /// only the gate can cancel a flight's task, right after the transition that ended its
    /// flight, and that transition takes the parked request out and resumes it as cancelled
    /// (see ``acquireSlot(for:judges:)``); a task cancelled already, or a flight that ended
    /// before this transition, counts as cancelled. A ``RequestGate/refresh()`` caller (`flight == nil`), whose task is the
    /// user's, is taken out by its cancellation handler.
    private func suspendParking(
        id: UInt64, flight: GateFlightKey?,
        whenCancelled: (inout State, inout [GateEvent]) -> Machine.ParkDecision,
        decide: (inout State, inout [GateEvent], Handles.Parked) -> Machine.ParkDecision
    ) async -> Machine.Resumption {
        typealias Effect = (effects: GateTransitionEffects, refresh: Machine.ParkDecision.Refresh?)
        typealias Resumed = Handoff<Machine.Resumption>
        func commit(_ decision: Machine.ParkDecision, _ state: inout State, _ events: [GateEvent]) -> Effect {
            state.start(decision.slotStarts)
            return (state.commit(events), decision.refresh)
        }
        func cancelledNow(_ state: inout State) -> (Resumed, Effect) {
            var events: [GateEvent] = []
            let decision = whenCancelled(&state, &events)
            return (Handoff(decision.resumption ?? .cancelledNow), commit(decision, &state, events))
        }
        let perform = { (effect: Effect) in
            self.carryOut(effect.effects)
            if let refresh = effect.refresh {
                self.refreshRunner.start(refresh.flight, replacing: refresh.replacing, in: self)
            }
        }
        func register(_ state: inout State, _ waiter: Handles.Parked) -> SuspensionDecision<Resumed, Effect> {
            var events: [GateEvent] = []
            let decision = decide(&state, &events, waiter)
            let effect = commit(decision, &state, events)
            guard let resumption = decision.resumption else { return .wait(effect) }
            return .resume(Handoff(resumption), effect)
        }
        if let flight {
            return await state.suspendIgnoringCancellation(
                { (state: inout State, waiter: Handles.Parked) -> SuspensionDecision<Resumed, Effect> in
                    guard !Task.isCancelled, state.machine.flights.isOpen(flight, request: id) else {
                        let (resumed, effect) = cancelledNow(&state)
                        return .resume(resumed, effect)
                    }
                    return register(&state, waiter)
                },
                perform: perform
            ).value
        }
        return await state.suspend(
            register,
            cancelledNow: cancelledNow,
            perform: perform,
            cancelled: { @Sendable [self] state, _ in
                guard let waiter = state.machine.cancelParked(request: id) else { return nil }
                let effects = state.commit([])
                return { [self] in
                    carryOut(effects)
                    waiter.resume(returning: Handoff(.cancelled))
                }
            }
        ).value
    }
}

extension GateStorage: EventBatchSource {
    typealias Element = GateEvent

    func batch(from index: inout Int, limit: Int, isolation: isolated (any Actor)?) async -> [GateEvent] {
        await state.batch(from: &index, limit: limit, journal: \.journal)
    }
}
