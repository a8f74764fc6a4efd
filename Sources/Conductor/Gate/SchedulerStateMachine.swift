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
    typealias Priority = PriorityScheduler.Priority

    enum SubmitAction {
        /// Run now; the caller holds a slot and must call ``finish(unique:)``.
        case start
        /// Queued; the payload comes back from a later transition.
        case enqueued
        /// The scheduler is shut down; nothing was recorded.
        case rejected
    }

    private struct Entry {
        var priority: Priority
        var enqueuedAtDispatch: UInt64
        /// Strict queue order: unlike `enqueuedAtDispatch`, no two entries share it, so the
        /// oldest aged head is always one entry (equal dispatch counts once let the higher lane
        /// win every tie and starve a low entry forever).
        var order: UInt64
        var payload: Payload
    }

    let limit: Int?
    let agingThreshold: UInt64

    /// Normal (non-unique) entries running now.
    private(set) var running = 0
    private(set) var uniqueRunning = false
    private(set) var isShutDown = false
    /// A lane's copy of what ordering needs, so picking the next lane looks nothing up.
    private struct Queued {
        var id: UInt64
        var enqueuedAtDispatch: UInt64
        var order: UInt64
    }

    /// Indexed by `Priority.rawValue` for low, default, high. Ids whose entry was cancelled
    /// or raised to another lane stay in the deque until they reach its head, so cancelling
    /// and raising are O(1).
    private var lanes: [Deque<Queued>] = [[], [], []]
    /// How many of each lane's ids are dead (their entry was cancelled or moved to another
    /// lane): while a lane has none, its head is live without a lookup.
    private var deadInLane = [0, 0, 0]
    private var uniqueLane: Deque<UInt64> = []
    private var entries: [UInt64: Entry] = [:]
    private var dispatches: UInt64 = 0
    private var enqueues: UInt64 = 0

    init(limit: Int?, agingThreshold: Int) {
        precondition(limit.map { $0 > 0 } ?? true, "the concurrency limit must be positive")
        precondition(agingThreshold > 0, "the aging threshold must be positive")
        self.limit = limit
        self.agingThreshold = UInt64(agingThreshold)
    }

    /// Entries waiting to start.
    var queuedCount: Int { entries.count }

    /// Entries waiting to start in `priority`'s lane (raised ones count in their new lane).
    /// - Complexity: O(queued); for test hooks.
    func queuedCount(in priority: Priority) -> Int {
        entries.values.count { $0.priority == priority }
    }

    /// Nothing runs and nothing waits.
    var isIdle: Bool { running == 0 && !uniqueRunning && entries.isEmpty }

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
        enqueues &+= 1
        entries[id] = Entry(priority: priority, enqueuedAtDispatch: dispatches, order: enqueues, payload: payload)
        if priority == .unique {
            uniqueLane.append(id)
        } else {
            lanes[priority.rawValue].append(Queued(id: id, enqueuedAtDispatch: dispatches, order: enqueues))
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
        // The id stays in its lane as a tombstone, skipped when it reaches the head, so
        // cancelling is O(1).
        guard let entry = entries.removeValue(forKey: id) else { return nil }
        if entry.priority != .unique { deadInLane[entry.priority.rawValue] += 1 }
        return (entry.payload, dispatch())
    }

    /// Moves a queued entry to the lane of `priority`, at its back, keeping its age; a
    /// coalesced flight takes the highest priority of its callers this way. Returns `false`
    /// when the entry already started, is unknown, or is not below `priority`. Nothing ever
    /// becomes or stops being `unique`: the barrier is a different kind of work, not a lane.
    @discardableResult
    mutating func raise(id: UInt64, to priority: Priority) -> Bool {
        guard priority != .unique, let entry = entries[id], entry.priority < priority else { return false }
        // The id stays in its old lane as a tombstone: `nextLane` skips ids whose entry lives
        // in another lane now.
        entries[id]!.priority = priority
        deadInLane[entry.priority.rawValue] += 1
        lanes[priority.rawValue].append(
            Queued(id: id, enqueuedAtDispatch: entry.enqueuedAtDispatch, order: entry.order))
        return true
    }

    /// Refuses all further work and returns every queued payload, oldest first within each
    /// lane, unique lane first. Running entries are unaffected.
    mutating func shutdown() -> [Payload] {
        guard !isShutDown else { return [] }
        isShutDown = true
        var dropped: [Payload] = []
        dropped.reserveCapacity(entries.count)
        for id in uniqueLane + lanes[2].map(\.id) + lanes[1].map(\.id) + lanes[0].map(\.id) {
            if let entry = entries.removeValue(forKey: id) { dropped.append(entry.payload) }
        }
        uniqueLane.removeAll()
        for index in lanes.indices { lanes[index].removeAll() }
        deadInLane = [0, 0, 0]
        return dropped
    }

    // MARK: - Private

    private func canStartImmediately(_ priority: Priority) -> Bool {
        if uniqueRunning { return false }
        if priority == .unique { return running == 0 && !hasQueuedUnique }
        // Anything queued (a unique barrier included) must not be overtaken.
        if !entries.isEmpty { return false }
        if let limit, running >= limit { return false }
        return true
    }

    private var hasQueuedUnique: Bool {
        uniqueLane.contains { entries[$0] != nil }
    }

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
            if let id = popLiveUnique() {
                guard running == 0 else {
                    uniqueLane.prepend(id)
                    break
                }
                started.append(entries.removeValue(forKey: id)!.payload)
                start(.unique)
                break
            }
            if let limit, running >= limit { break }
            guard let lane = nextLane(), let head = lanes[lane].popFirst() else { break }
            let entry = entries.removeValue(forKey: head.id)!
            started.append(entry.payload)
            start(entry.priority)
        }
        return started
    }

    /// Drops cancelled ids from the head of the unique lane and pops the live head.
    private mutating func popLiveUnique() -> UInt64? {
        while let id = uniqueLane.first {
            if entries[id] != nil { return uniqueLane.removeFirst() }
            uniqueLane.removeFirst()
        }
        return nil
    }

    /// The lane whose head starts next, after dropping cancelled heads.
    private mutating func nextLane() -> Int? {
        var highest: Int?
        var oldestAged: (lane: Int, order: UInt64)?
        for lane in stride(from: 2, through: 0, by: -1) {
            while deadInLane[lane] > 0, let head = lanes[lane].first,
                entries[head.id]?.priority.rawValue != lane
            {
                lanes[lane].removeFirst()
                deadInLane[lane] -= 1
            }
            guard let head = lanes[lane].first else { continue }
            if highest == nil { highest = lane }
            if dispatches &- head.enqueuedAtDispatch >= agingThreshold,
                oldestAged.map({ head.order < $0.order }) ?? true
            {
                oldestAged = (lane, head.order)
            }
        }
        return oldestAged?.lane ?? highest
    }
}
