/// A slot of a ``GateStateMachine``, as the attempt or refresh holding it gives it back: its
/// priority, the failure epoch (see ``GateCredentialMachine/failureEpoch``) seen when it
/// queued, and, for an attempt, the decision the transition that gave it the slot took.
struct GateSlot<Credential: Sendable>: Sendable {
    typealias Priority = RequestPriority

    /// What the look at an attempt in its slot decided: whether it goes out, and with which
    /// credential.
    enum Decision: Sendable {
        /// Send now with this credential (`nil`: the request needs none); recorded as `running`.
        case send(Credential?, version: Int)
        /// End the request without sending, still holding its slot.
        case failNow(GateFailure)
        /// Its task was cancelled: end it, still holding its slot.
        case cancelledNow
        /// The request would send `credential` (version `version`), which must be judged first,
        /// outside the lock (the judge is user code).
        case judge(Credential, version: Int)
        /// The credential the request was about to send was judged stale.
        case stale(version: Int)
        /// A refresh runs, or there is no credential yet: park.
        case park
    }

    /// What an attempt (or the refresh) waiting for a slot is resumed with.
    enum Grant: Sendable {
        /// The slot, with the attempt's first decision taken by the transition that started it.
        case started(GateSlot)
        case cancelled
        case shutDown
    }

    var priority: Priority
    var epoch: Int
    /// The attempt's first decision, taken in the transition that gave it the slot; `nil` for
    /// the refresh.
    var decision: Decision?
}
