extension GateStorage {
    // MARK: - The refresh

    /// Keeps refresh `flight`'s task, so a sign-in, sign-out or shutdown can cancel it; `false`
    /// when one of them replaced the refresh before its task was recorded (cancel it then).
    func recordRefreshTask(_ flight: GateRefreshFlight, _ task: Task<Void, Never>) -> Bool {
        state.withLock { $0.keepRefreshTask(flight, task) }
    }

    /// ``GateStateMachine/refreshEnded(_:_:releasingSlot:events:)``, then the parked requests
    /// woken, each with how it goes on.
    func refreshEnded(_ flight: GateRefreshFlight, _ result: Machine.RefreshResult, releasingSlot: Bool) {
        let (ended, effects) = state.withLock { state -> (Machine.RefreshEndStep, GateTransitionEffects) in
            var events: [GateEvent] = []
            let step = state.machine.refreshEnded(flight, result, releasingSlot: releasingSlot, events: &events)
            state.start(step.slotStarts)
            if step.settled { _ = state.takeRefreshTask(of: flight) }
            var effects = state.commit(events)
            effects.releasedByRefresh = step.released
            return (step, effects)
        }
        carryOut(effects)
        for (waiter, resumption) in ended.waiters { waiter.resume(returning: Handoff(resumption)) }
    }

    // MARK: - Credentials from outside

    /// ``GateStateMachine/replace(_:events:)``, then the tasks and waiters it let go: a shutdown
    /// ends every pending request once with ``GateError/Code/shutDown`` (cancelling what is on
    /// the wire and the running refresh), refuses new ones, and finishes the journal.
    func replace(_ replacement: Machine.Replacement) {
        typealias Replaced = (
            step: Machine.ReplaceStep, refreshTask: Task<Void, Never>?, effects: GateTransitionEffects
        )
        let replaced = state.withLock { state -> Replaced in
            var events: [GateEvent] = []
            let step = state.machine.replace(replacement, events: &events)
            let task = step.cancelledRefresh.flatMap { state.takeRefreshTask(of: $0) }
            // A shutdown's events are the journal's last; then readers get the end.
            if step.finishesJournal { state.finishesJournal = true }
            return (step, task, state.commit(events))
        }
        let step = replaced.step
        // Flights the shutdown ended before their task carried out their opening: that first.
        for flight in step.flights.work { flight.settleOpening(self) }
        carryOut(replaced.effects)
        for flight in step.flights.work { flight.cancel() }
        replaced.refreshTask?.cancel()
        let shutDown = Handoff(Machine.SlotGrant.shutDown)
        for waiter in step.flights.droppedSlots { waiter.resume(returning: shutDown) }
        let outcome = Handoff(Result<GateResponse, GateError>.failure(.shutDown(nil)))
        for caller in step.flights.callers { caller.resume(returning: .ended(outcome)) }
        let resumption = Handoff(step.failure.map { Machine.Resumption.fail($0) } ?? .proceed)
        for waiter in step.parked { waiter.resume(returning: resumption) }
    }
}
