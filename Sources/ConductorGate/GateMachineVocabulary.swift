/// The types a ``GateStateMachine`` keeps but never looks into: what the storage resumes or
/// cancels once a transition is over — continuations and tasks in the gate, plain values in the
/// machine's tests.
protocol GateHandles {
    associatedtype Credential: Sendable
    /// A request parked behind the refresh.
    associatedtype Parked: Sendable
    /// A caller waiting for its flight's outcome.
    associatedtype Caller: Sendable
    /// An attempt, or the refresh, waiting for a slot.
    associatedtype SlotWaiter: Sendable
    /// A flight's task.
    associatedtype Work: Sendable
}

/// What the first decision at an attempt queued for a slot needs (see
/// ``GateStateMachine/queue(_:id:waiter:judges:events:)``). Not nested in the generic machine,
/// so that it is one concrete type at run time (see ``GateFailure``).
struct GateQueuedAttempt: Sendable {
    var request: UInt64
    var number: Int
    var needsAuthorization: Bool
    /// Whether the look asks for the judge's verdict first.
    var judges: Bool
}

/// Which flight a request joins: its own, or the one its coalescing key names. Not nested in
/// the generic machine, so that it is one concrete type at run time (see ``GateFailure``).
enum GateFlightKey: Hashable, Sendable {
    case request(UInt64)
    case coalesced(String)
}

/// Who waits for a slot of a ``GateStateMachine``. This and the two types below are not nested
/// in the generic machine, so that each is one concrete type at run time (see ``GateFailure``).
enum GateSlotClaimant: Sendable {
    /// Attempt `number` of the request of flight `key`, at the flight's priority.
    case attempt(key: GateFlightKey, request: UInt64, number: Int, needsAuthorization: Bool)
    /// The refresh: the `unique` barrier.
    case refresh
}

/// The attempt a parked request makes next, kept with it so that the refresh's end can hand it
/// a slot and authorize it in the same transition (see
/// ``GateStateMachine/refreshEnded(_:_:releasingSlot:events:)``).
struct GateNextAttempt: Sendable {
    var key: GateFlightKey
    var request: UInt64
    /// Its number, as its `running` event names it.
    var number: Int
}

/// Why a request parks behind a refresh, which the event that records it says.
enum GateParkReason: Sendable {
    /// The server rejected the credential the request carried.
    case rejected
    /// The credential was judged stale before the request was sent.
    case stale
}
