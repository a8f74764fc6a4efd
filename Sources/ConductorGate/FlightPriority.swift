/// The priority of a coalesced flight: the highest of the callers that joined it (Nuke's
/// model), capped at `high` because `unique` is an exclusive barrier rather than a lane.
///
/// It remembers the scheduler entry of the flight's queued attempt, so a caller who joins
/// with a higher priority moves that entry to the higher lane. Both sides go through this
/// one lock, so whichever comes second sees the other: a raise never misses the entry.
final class FlightPriority: Sendable {
    typealias Priority = PriorityScheduler.Priority

    private struct State {
        var priority: Priority
        var queuedID: UInt64?
    }

    private let state: Lock<State>

    init(_ priority: Priority) {
        state = Lock(State(priority: priority))
    }

    /// The priority the flight's next attempt queues with.
    var current: Priority { state.withLock { $0.priority } }

    /// Raises the flight to `priority` (at most `high`). Returns the scheduler entry to move,
    /// if the flight has one queued and the priority went up.
    func raise(to priority: Priority) -> (id: UInt64, priority: Priority)? {
        let target = min(priority, .high)
        return state.withLock { state in
            guard target > state.priority else { return nil }
            state.priority = target
            return state.queuedID.map { ($0, target) }
        }
    }

    /// Records that the flight's attempt waits as scheduler entry `id`; returns the priority
    /// now, which may have risen since the entry was queued.
    func queued(as id: UInt64) -> Priority {
        state.withLock { state in
            state.queuedID = id
            return state.priority
        }
    }
}
