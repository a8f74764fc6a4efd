/// Everything under a ``GateStorage``'s one lock: the gate's machine, its event journal, the
/// running refresh's task, the test hooks' waiters, and what the transition under way has let
/// start. ``commit(_:)`` ends every transition.
struct GateLockedState {
    typealias Machine = GateStorage.Machine

    var machine: Machine
    var journal: JournalBuffer<GateEvent>
    /// The task of the running refresh, so a sign-in, sign-out or shutdown can cancel it.
    var refreshTask: (id: UInt64, task: Task<Void, Never>)?
    /// Test hooks' waiters (GateStorage+Testing.swift): empty until a test waits.
    var parkedWaiters = CountWaiters<Void>()
    var queuedWaiters = CountWaiters<Void>()
    var idleWaiters = WaiterSet<Bool>()
    /// The attempts (or refresh) this transition gave a slot, to resume once it is over.
    var slotStarts: [Machine.SlotStart] = []
    /// Set by the shutdown: its transition's events are the journal's last.
    var finishesJournal = false
    var queueDepth = GateQueueDepth()

    /// Keeps refresh `flight`'s task, unless a sign-in, sign-out or shutdown replaced the
    /// refresh before its task was recorded (`false`).
    mutating func keepRefreshTask(_ flight: GateRefreshFlight, _ task: Task<Void, Never>) -> Bool {
        guard machine.credentials.isRunning(flight) else { return false }
        refreshTask = (flight.id, task)
        return true
    }

    /// Refresh `flight` ended or was replaced: its task, if it is the one kept, taken (to cancel
    /// when replaced); whatever task was kept is no longer the running refresh's.
    mutating func takeRefreshTask(of flight: GateRefreshFlight) -> Task<Void, Never>? {
        defer { refreshTask = nil }
        return refreshTask?.id == flight.id ? refreshTask?.task : nil
    }

    /// Ends a transition: journals its events and takes what must be told or resumed once
    /// the lock is released.
    mutating func commit(_ events: [GateEvent]) -> GateTransitionEffects {
        var readers = journal.append(contentsOf: events)
        if finishesJournal && !journal.isFinished { readers += journal.finish() }
        var effects = GateTransitionEffects(
            events: events, queueDepth: queueDepth.sample(machine.slots.queuedCount))
        // Most transitions wake nobody: then nothing but the events is carried out.
        guard
            !slotStarts.isEmpty || !readers.isEmpty || !parkedWaiters.isEmpty || !queuedWaiters.isEmpty
                || !idleWaiters.isEmpty
        else { return effects }
        var resumed = GateTransitionEffects.Resumed(slotStarts: slotStarts, readers: readers)
        slotStarts.removeAll()
        // The hooks' waiters: checked only while a test waits.
        if !parkedWaiters.isEmpty {
            resumed.hooks += parkedWaiters.takeSatisfied(by: machine.credentials.parkedCount)
        }
        if !queuedWaiters.isEmpty { resumed.hooks += queuedWaiters.takeSatisfied(by: machine.slots.queuedCount) }
        if !idleWaiters.isEmpty, machine.slots.isIdle { resumed.idle = idleWaiters.removeAll() }
        effects.resumed = resumed
        return effects
    }

    /// Keeps `starts` to resume once the transition is over: taken whole when nothing else
    /// is (each start holds its decision's credential, whose closures a copy would retain).
    mutating func start(_ starts: [Machine.SlotStart]) {
        if slotStarts.isEmpty { slotStarts = starts } else if !starts.isEmpty { slotStarts += starts }
    }
}
