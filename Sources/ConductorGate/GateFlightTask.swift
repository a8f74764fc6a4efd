import Synchronization

/// A flight's task and what opening the flight left to carry out, shared by the transition
/// that opened the flight, the code that starts its task once the lock is released, and
/// whichever transition ends the flight.
///
/// The task is started after the lock is released, because starting it enqueues a job on the
/// caller's task executor, which may be user code (a `TaskExecutor`). A flight can end (its
/// last caller leaves, a shutdown) before its task is attached: whichever of ``attach(_:)``
/// and ``cancel()`` comes second cancels the task, so a flight's task is cancelled whenever its
/// flight ended early, without a second lock acquisition. Whether the flight is open is the
/// flight table's fact (``FlightTable``); `phase` only says whether the task was attached
/// before that end was carried out, which the table, changed under the lock, cannot know.
final class GateFlightTask: Sendable {
    private enum Phase: UInt8, AtomicRepresentable {
        case waiting
        case attached
        case cancelled
    }

    /// What opening the flight left to carry out. Written once, in the transition that opens
    /// the flight, under the gate's lock, before that transition releases it; every read comes
    /// after that transition — the code that starts the task, which runs after the lock is
    /// released, or a later transition — so the lock orders the write before them.
    nonisolated(unsafe) var opening: GateTransitionEffects = .none
    private let openingSettled = Atomic<Bool>(false)
    private let phase = Atomic<Phase>(.waiting)
    /// Written once, by ``attach(_:)``, before its releasing exchange of `phase` to
    /// `attached`; read only by ``cancel()`` after an acquiring exchange that saw `attached`.
    /// So every read happens after the one write, and the one write after no read.
    nonisolated(unsafe) private var task: Task<Void, Never>?

    /// Carries out the opening once: the first call wins.
    func settleOpening(_ storage: GateStorage) {
        if !openingSettled.exchange(true, ordering: .acquiringAndReleasing) { storage.carryOut(opening) }
    }

    /// The flight's task, started; cancelled at once if the flight has already ended.
    func attach(_ task: Task<Void, Never>) {
        self.task = task
        let (attached, _) = phase.compareExchange(
            expected: .waiting, desired: .attached, ordering: .acquiringAndReleasing)
        if !attached { task.cancel() }
    }

    /// The flight ended early: cancels its task, now or when it is attached.
    func cancel() {
        let (exchanged, original) = phase.compareExchange(
            expected: .waiting, desired: .cancelled, ordering: .acquiringAndReleasing)
        if !exchanged, original == .attached { task?.cancel() }
    }
}

/// What a caller of a flight is woken with.
enum GateDelivery: Sendable {
    /// The flight ended: its outcome, shared by every caller on it.
    case ended(Handoff<Result<GateResponse, GateError>>)
    /// This caller was cancelled before the flight ended.
    case cancelled
    /// Refused before a flight opened.
    case refused(GateFailure)
}
