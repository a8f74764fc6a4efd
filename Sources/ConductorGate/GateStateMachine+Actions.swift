/// The vocabulary of a ``GateStateMachine``'s actions that the storage carries out: how a
/// waiting request goes on, what a parking transition, a refresh's end, a replacement of the
/// credential and a flight's early end decided. Kept apart from the transitions themselves.
extension GateStateMachine {
    /// How a request that waited on the credential (or might have) goes on: what a parking
    /// transition decides at once, and what a later one wakes a parked request with.
    enum Resumption: Sendable {
        /// Send now with this credential, holding the slot; recorded as `running`.
        case send(Credential?, version: Int)
        /// End the request without sending, still holding its slot.
        case failNow(Failure)
        /// Its task was cancelled before the transition: end it, still holding its slot.
        case cancelledNow
        /// Woken after parking by the refresh's end, holding a slot it took for the request,
        /// with the next attempt's first decision taken (a send, recorded as `running` there).
        case granted(Slot)
        /// Queue for a slot again (its slot was given back, or it held none).
        case proceed
        /// End the request; its slot was given back.
        case fail(Failure)
        /// Its task was cancelled; its slot was given back.
        case cancelled
    }

    /// What a transition that may park a request decided.
    struct ParkDecision: Sendable {
        /// How the request goes on now; `nil`: parked (its slot given back), a later transition
        /// wakes it.
        var resumption: Resumption?
        typealias Refresh = (flight: GateRefreshFlight, replacing: Credential?)
        /// The refresh this transition started, to run once the lock is released.
        var refresh: Refresh?
        /// The attempts (or refresh) that start on the slot this transition gave back.
        var slotStarts: [SlotStart] = []
    }

    /// How a refresh ended.
    enum RefreshResult: Sendable {
        case succeeded(Credential)
        case failed(Failure)
        /// Its task was cancelled: only a sign-in, sign-out or shutdown does that, and each has
        /// already replaced the refresh.
        case cancelled
    }

    /// What replaces the credential from outside the gate.
    enum Replacement: Sendable {
        case signIn(Credential)
        case signOut
        case shutdown
    }
}

/// What a flight that ended early was waiting in, taken out in the transition that ended
/// it (see ``abandonWaits(of:events:)``).
struct GateAbandonedWaits<Handles: GateHandles>: Sendable {
    /// Its attempt's queued slot entry's waiter, to resume as cancelled.
    var slot: Handles.SlotWaiter?
    /// Its request parked behind the refresh, to resume as cancelled.
    var parked: Handles.Parked?
    /// The entries the slot entry's leaving lets start.
    var started: [GateStateMachine<Handles>.SlotStart] = []
}

/// What a shutdown did to the flights, on top of the credential's ``GateCredentialMachine/ReplaceAction``.
struct GateShutdownFlights<Handles: GateHandles>: Sendable {
    var callers: [Handles.Caller] = []
    var work: [Handles.Work] = []
    var droppedSlots: [Handles.SlotWaiter] = []
}

/// What the end of a refresh decided.
struct GateRefreshEndStep<Handles: GateHandles>: Sendable {
    /// The requests parked behind it, to wake in this order, each with how it goes on: a
    /// slot handed to it (`granted`), `proceed` (queue for one again; a
    /// ``RequestGate/refresh()`` caller needs none) or `fail`. Empty when the refresh had
    /// been replaced.
    var waiters: [(waiter: Handles.Parked, resumption: GateStateMachine<Handles>.Resumption)] = []
    var failure: GateFailure?
    /// The requests (not ``RequestGate/refresh()`` callers) it released, for the
    /// instruments to link to the refresh's span.
    var released: [UInt64] = []
    /// Whether the refresh was still current (so its task is no longer the running one).
    var settled = false
    var slotStarts: [GateStateMachine<Handles>.SlotStart] = []
}

/// What a sign-in, sign-out or shutdown decided.
struct GateReplaceStep<Handles: GateHandles>: Sendable {
    /// The refresh it replaced, whose task to cancel.
    var cancelledRefresh: GateRefreshFlight?
    /// The parked requests, to wake: they go on (`failure == nil`) or fail.
    var parked: [Handles.Parked] = []
    var failure: GateFailure?
    /// What a shutdown ended: every flight and queued slot.
    var flights = GateShutdownFlights<Handles>()
    /// A shutdown: this transition's events are the journal's last.
    var finishesJournal = false
}
