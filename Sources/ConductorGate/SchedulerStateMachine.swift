import DequeModule

/// The decisions of a ``PriorityScheduler``, as a value type with no concurrency in it.
///
/// `Payload` is whatever the storage must act on when an entry starts or is dropped (a
/// continuation, a job closure); tests use plain values. Every transition returns the
/// payloads to act on; the caller acts after releasing its lock.
///
/// Dispatch order: a running `unique` entry blocks everything; a queued `unique` entry is a
/// barrier that starts once nothing runs; otherwise, within the concurrency limit, the lane
/// heads compete — a head that has waited for `agingThreshold` dispatches wins (the one queued
/// first, by a strict queue order, so there are no ties), else the highest lane wins. FIFO
/// within a lane.
///
/// The aging bound: an entry is *overtaken* when an entry queued after it starts before it.
/// A (non-unique, never raised) entry is overtaken at most `agingThreshold` times, whatever
/// the arrival pattern: after `agingThreshold` dispatches it is aged, and from then on only
/// entries queued before it may start ahead of it. `unique` barriers are not counted: they
/// overtake everything by design.
struct SchedulerStateMachine<Payload> {
    typealias Priority = RequestPriority

    enum SubmitAction {
        /// Run now; the caller holds a slot and must call ``finish(unique:)``.
        case start
        /// Queued; the payload comes back from a later transition.
        case enqueued
        /// The scheduler is shut down; nothing was recorded.
        case rejected
    }

    let limit: Int?
    let agingThreshold: UInt64

    /// Normal (non-unique) entries running now.
    private(set) var running = 0
    private(set) var uniqueRunning = false
    private(set) var isShutDown = false
    /// Low, default and high, as lanes 0, 1 and 2 (`Priority.rawValue`).
    private var lanes: PriorityLanes<Payload>
    /// Queued `unique` barriers, oldest first. Few at a time: cancelling one searches.
    private var uniqueLane: Deque<(id: UInt64, payload: Payload)> = []
    /// Non-unique starts so far: what ages a queued entry.
    private var dispatches: UInt64 = 0

    init(limit: Int?, agingThreshold: Int) {
        precondition(limit.map { $0 > 0 } ?? true, "the concurrency limit must be positive")
        precondition(agingThreshold > 0, "the aging threshold must be positive")
        self.limit = limit
        self.agingThreshold = UInt64(agingThreshold)
        lanes = PriorityLanes(laneCount: 3, agingThreshold: agingThreshold)
    }

    /// Entries waiting to start.
    var queuedCount: Int { lanes.count + uniqueLane.count }

    /// Entries waiting to start in `priority`'s lane (raised ones count in their new lane).
    /// - Complexity: O(queued); for test hooks.
    func queuedCount(in priority: Priority) -> Int {
        priority == .unique ? uniqueLane.count : lanes.count(inLane: priority.rawValue)
    }

    /// Nothing runs and nothing waits.
    var isIdle: Bool { running == 0 && !uniqueRunning && queuedCount == 0 }

    /// Starts work at once when that would overtake nobody; `nil` when shut down.
    /// The fast path: no payload is needed when the answer is yes.
    mutating func startImmediately(_ priority: Priority) -> Bool? {
        guard !isShutDown else { return nil }
        guard canStartImmediately(priority) else { return false }
        start(priority)
        return true
    }

    mutating func submit(id: UInt64, priority: Priority, payload: Payload) -> SubmitAction {
        guard !isShutDown else { return .rejected }
        if canStartImmediately(priority) {
            start(priority)
            return .start
        }
        if priority == .unique {
            uniqueLane.append((id, payload))
        } else {
            lanes.enqueue(id: id, lane: priority.rawValue, payload: payload, startsSoFar: dispatches)
        }
        return .enqueued
    }

    /// Ends a running entry and returns the payloads that start now, in start order.
    mutating func finish(unique: Bool) -> [Payload] {
        if unique {
            precondition(uniqueRunning, "finish(unique: true) without a running unique entry")
            uniqueRunning = false
        } else {
            precondition(running > 0, "finish(unique: false) without a running entry")
            running -= 1
        }
        return dispatch()
    }

    /// Removes a queued entry. Returns its payload and the payloads that start because it
    /// left (a cancelled unique barrier releases the work behind it), or `nil` when the entry
    /// already started or is unknown.
    mutating func cancel(id: UInt64) -> (cancelled: Payload, started: [Payload])? {
        if let index = uniqueLane.firstIndex(where: { $0.id == id }) {
            let payload = uniqueLane.remove(at: index).payload
            return (payload, dispatch())
        }
        guard let removed = lanes.remove(id: id) else { return nil }
        return (removed.payload, dispatch())
    }

    /// Moves a queued entry to the lane of `priority`, at its back, keeping its age; a
    /// coalesced flight takes the highest priority of its callers this way. Returns `false`
    /// when the entry already started, is unknown, or is not below `priority`. Nothing ever
    /// becomes or stops being `unique`: the barrier is a different kind of work, not a lane.
    @discardableResult
    mutating func raise(id: UInt64, to priority: Priority) -> Bool {
        guard priority != .unique else { return false }
        return lanes.raise(id: id, to: priority.rawValue)
    }

    /// Refuses all further work and returns every queued payload, oldest first within each
    /// lane, unique lane first. Running entries are unaffected.
    mutating func shutdown() -> [Payload] {
        guard !isShutDown else { return [] }
        isShutDown = true
        let unique = uniqueLane.map(\.payload)
        uniqueLane.removeAll()
        return unique + lanes.removeAll()
    }

    // MARK: - Private

    private func canStartImmediately(_ priority: Priority) -> Bool {
        if uniqueRunning { return false }
        if priority == .unique { return running == 0 && !hasQueuedUnique }
        // Anything queued (a unique barrier included) must not be overtaken.
        if queuedCount > 0 { return false }
        if let limit, running >= limit { return false }
        return true
    }

    private var hasQueuedUnique: Bool { !uniqueLane.isEmpty }

    private mutating func start(_ priority: Priority) {
        if priority == .unique {
            uniqueRunning = true
        } else {
            running += 1
            dispatches &+= 1
        }
    }

    private mutating func dispatch() -> [Payload] {
        var started: [Payload] = []
        while !uniqueRunning {
            if let barrier = uniqueLane.first {
                guard running == 0 else { break }
                uniqueLane.removeFirst()
                started.append(barrier.payload)
                start(.unique)
                break
            }
            if let limit, running >= limit { break }
            guard let next = lanes.popNext(startsSoFar: dispatches) else { break }
            started.append(next.payload)
            // Any lane but the barrier's starts the same way.
            start(.default)
        }
        return started
    }
}
