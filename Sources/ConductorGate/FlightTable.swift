/// Work in flight under a key and the callers waiting for each flight's outcome, as a value with
/// no concurrency in it: the flights part of a ``GateStateMachine`` (keyed by
/// ``GateFlightKey``), and of a ``PriorityScheduler``'s coalescing `run` (keyed by
/// ``ErasedCoalescingKey``), each under its owner's one lock beside its slots, so a joining
/// caller raises the flight's queued slot in the same transition.
///
/// The one home of a flight's openness: a flight is open while it is in this table, and each
/// flight leaves it exactly once (its own end, its last caller leaving, or a shutdown), which
/// is what lets the gate journal each request's end exactly once.
struct FlightTable<Key: Hashable, Caller, Work> {
    typealias Priority = RequestPriority

    /// One request in flight and the callers waiting for its outcome.
    struct Flight {
        /// The flight's id (the gate's request id): a key is reused by the next flight once one
        /// ended, the id never.
        var request: UInt64
        /// In the order they came, by the id their cancellation names them with.
        var callers: [(id: UInt64, caller: Caller)]
        /// The highest priority of its callers, capped at `high` (a `unique` barrier is not a
        /// lane); the priority its next attempt queues with.
        var priority: Priority
        /// The slot entry its attempt waits as, so a caller who joins with a higher priority
        /// moves it to the higher lane. Stale once the attempt started (raising it then finds
        /// nothing: entry ids are never reused).
        var queuedSlot: UInt64?
        var work: Work

        /// Records `slot` as the queued entry, if this is request `id`'s flight; its priority.
        mutating func queue(_ slot: UInt64, ifRequest id: UInt64) -> Priority? {
            guard request == id else { return nil }
            queuedSlot = slot
            return priority
        }
    }

    /// What a caller's joining a flight in the air decided.
    enum JoinAction {
        /// Joined; the flight's priority is unchanged.
        case joined
        /// Joined and raised the flight to `priority`: move its queued slot entry, if it has one.
        case raised(queuedSlot: UInt64?, to: Priority)
    }

    /// What a cancelled caller's leaving decided.
    enum LeaveAction {
        /// The caller had its outcome already, or was never kept: nothing to do.
        case gone
        /// The caller left; others remain on the flight.
        case left(Caller)
        /// The caller was the last: the flight ended as cancelled; cancel its work.
        case ended(Caller, Flight)
    }

    private var flights: [Key: Flight] = [:]

    var count: Int { flights.count }

    /// The flight `key` names, if it is request `id`'s (a key is reused by the next flight
    /// once one ended).
    func flight(_ key: Key, of id: UInt64) -> Flight? {
        guard let flight = flights[key], flight.request == id else { return nil }
        return flight
    }

    /// Whether request `id`'s flight is in the air under `key`.
    func isOpen(_ key: Key, request id: UInt64) -> Bool {
        flights[key]?.request == id
    }

    /// The priority the flight `key` names queues with, if it is in the air.
    func priority(of key: Key) -> Priority? {
        flights[key]?.priority
    }

    /// Adds caller `callerID` to the flight `key` names, raising the flight to its priority;
    /// `nil` when no flight is in the air under `key`.
    mutating func join(_ key: Key, callerID: UInt64, caller: Caller, priority: Priority) -> JoinAction? {
        guard var flight = flights[key] else { return nil }
        flight.callers.append((callerID, caller))
        let target = min(priority, .high)
        var action = JoinAction.joined
        if target > flight.priority {
            flight.priority = target
            action = .raised(queuedSlot: flight.queuedSlot, to: target)
        }
        flights[key] = flight
        return action
    }

    /// Opens a flight for request `id` under `key`, holding its first caller.
    mutating func open(
        _ key: Key, request id: UInt64, callerID: UInt64, caller: Caller, priority: Priority, work: Work
    ) {
        flights[key] = Flight(request: id, callers: [(callerID, caller)], priority: priority, work: work)
    }

    /// Flight `id` under `key` waits for a slot as entry `slot`: returns the priority it queues
    /// with, or `nil` when the flight has ended (nothing is recorded). One lookup of `key`.
    @discardableResult
    mutating func queued(_ key: Key, request id: UInt64, slot: UInt64) -> Priority? {
        flights[key]?.queue(slot, ifRequest: id)
    }

    /// Flight `id`'s work, once started; `false` when the flight ended first.
    mutating func attach(_ work: Work, to key: Key, request id: UInt64) -> Bool {
        guard flights[key]?.request == id else { return false }
        flights[key]?.work = work
        return true
    }

    /// The callers on every flight (a test hook's count: O(flights)).
    var callerCount: Int { flights.values.reduce(0) { $0 + $1.callers.count } }

    /// Caller `callerID` of flight `key` leaves; the last caller to leave ends the flight.
    mutating func leave(_ key: Key, caller callerID: UInt64) -> LeaveAction {
        guard var flight = flights[key], let index = flight.callers.firstIndex(where: { $0.id == callerID }) else {
            return .gone
        }
        let caller = flight.callers.remove(at: index).caller
        guard flight.callers.isEmpty else {
            flights[key] = flight
            return .left(caller)
        }
        flights[key] = nil
        return .ended(caller, flight)
    }

    /// Request `id`'s flight ended: taken out, unless it ended already (its last caller left,
    /// or a shutdown took it).
    mutating func end(_ key: Key, request id: UInt64) -> Flight? {
        guard let flight = flight(key, of: id) else { return nil }
        flights[key] = nil
        return flight
    }

    /// Every flight, taken out (a shutdown).
    mutating func removeAll() -> [Flight] {
        defer { flights.removeAll() }
        return Array(flights.values)
    }
}
