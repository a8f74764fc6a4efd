public import DequeModule

/// Entries waiting in priority lanes, FIFO within a lane, with aging: the lane type behind
/// every queue whose entries can be cancelled, raised or starved (the scheduler's, the gate's
/// slots). A graph run's ready tasks use the graph's `ReadyQueue` instead: queued once, taken
/// once, never aged, they need none of the ids and tombstones that cancelling and raising
/// need here, and would pay for them on every task.
///
/// A lane head that has waited through `agingThreshold` starts wins over higher lanes (the
/// oldest such head, by a strict queue order, so there are no ties); otherwise the highest
/// non-empty lane goes first. Cancelling and raising are O(1): the id stays in its old lane as
/// a tombstone, skipped when it reaches the head.
///
/// ```swift
/// var lanes = PriorityLanes<String>(laneCount: 3, agingThreshold: 64)
/// lanes.enqueue(id: 1, lane: 0, payload: "prefetch", startsSoFar: 0)
/// lanes.enqueue(id: 2, lane: 2, payload: "visible row", startsSoFar: 0)
/// lanes.popNext(startsSoFar: 0)?.payload  // "visible row"
/// ```
@usableFromInline package struct PriorityLanes<Payload> {
    @usableFromInline struct Entry {
        @usableFromInline package var lane: Int
        @usableFromInline package var enqueuedAtStart: UInt64
        @usableFromInline package var order: UInt64
        @usableFromInline package var payload: Payload

        @inlinable init(lane: Int, enqueuedAtStart: UInt64, order: UInt64, payload: Payload) {
            self.lane = lane
            self.enqueuedAtStart = enqueuedAtStart
            self.order = order
            self.payload = payload
        }
    }

    /// A lane's copy of what ordering needs, so picking the next lane looks nothing up.
    @usableFromInline struct Queued {
        @usableFromInline package var id: UInt64
        @usableFromInline package var enqueuedAtStart: UInt64
        @usableFromInline package var order: UInt64

        @inlinable init(id: UInt64, enqueuedAtStart: UInt64, order: UInt64) {
            self.id = id
            self.enqueuedAtStart = enqueuedAtStart
            self.order = order
        }
    }

    @usableFromInline package let agingThreshold: UInt64
    @usableFromInline var lanes: [Deque<Queued>]
    /// How many of each lane's ids are dead (cancelled, or raised to another lane): while a
    /// lane has none, its head is live without a lookup.
    @usableFromInline var deadInLane: [Int]
    @usableFromInline var entries: [UInt64: Entry] = [:]
    @usableFromInline var enqueues: UInt64 = 0

    @inlinable package init(laneCount: Int, agingThreshold: Int) {
        precondition(laneCount > 0 && agingThreshold > 0, "lanes and the aging threshold must be positive")
        self.agingThreshold = UInt64(agingThreshold)
        lanes = Array(repeating: [], count: laneCount)
        deadInLane = Array(repeating: 0, count: laneCount)
    }

    /// Entries waiting.
    @inlinable package var count: Int { entries.count }
    @inlinable package var isEmpty: Bool { entries.isEmpty }

    /// Entries waiting in `lane` (raised ones count in their new lane).
    /// - Complexity: O(count); for test hooks.
    @inlinable package func count(inLane lane: Int) -> Int {
        entries.values.count { $0.lane == lane }
    }

    /// Queues `payload` as `id` at the back of `lane`; `startsSoFar` is the owner's count of
    /// starts, which ages the entry.
    @inlinable package mutating func enqueue(id: UInt64, lane: Int, payload: Payload, startsSoFar: UInt64) {
        enqueues &+= 1
        entries[id] = Entry(lane: lane, enqueuedAtStart: startsSoFar, order: enqueues, payload: payload)
        lanes[lane].append(Queued(id: id, enqueuedAtStart: startsSoFar, order: enqueues))
    }

    /// Removes entry `id`; `nil` when it already left or is unknown.
    @inlinable package mutating func remove(id: UInt64) -> (lane: Int, payload: Payload)? {
        guard let entry = entries.removeValue(forKey: id) else { return nil }
        deadInLane[entry.lane] += 1
        return (entry.lane, entry.payload)
    }

    /// Moves entry `id` to the back of `lane`, keeping its age. `false` when it is unknown or
    /// not in a lower lane.
    @inlinable package mutating func raise(id: UInt64, to lane: Int) -> Bool {
        guard var entry = entries[id], entry.lane < lane else { return false }
        deadInLane[entry.lane] += 1
        entry.lane = lane
        entries[id] = entry
        lanes[lane].append(Queued(id: id, enqueuedAtStart: entry.enqueuedAtStart, order: entry.order))
        return true
    }

    /// Removes and returns the entry that starts next, given the owner's count of starts.
    @inlinable package mutating func popNext(startsSoFar: UInt64) -> (id: UInt64, lane: Int, payload: Payload)? {
        guard let lane = nextLane(startsSoFar: startsSoFar), let head = lanes[lane].popFirst(),
            let entry = entries.removeValue(forKey: head.id)
        else { return nil }
        return (head.id, lane, entry.payload)
    }

    /// Empties every lane; returns the payloads, highest lane first, oldest first within one.
    @inlinable package mutating func removeAll() -> [Payload] {
        var dropped: [Payload] = []
        dropped.reserveCapacity(entries.count)
        for lane in lanes.indices.reversed() {
            for queued in lanes[lane] {
                if let entry = entries[queued.id], entry.lane == lane {
                    dropped.append(entry.payload)
                    entries[queued.id] = nil
                }
            }
            lanes[lane].removeAll()
            deadInLane[lane] = 0
        }
        return dropped
    }

    /// The lane whose head starts next, after dropping dead heads.
    @inlinable mutating func nextLane(startsSoFar: UInt64) -> Int? {
        var highest: Int?
        var oldestAged: (lane: Int, order: UInt64)?
        for lane in lanes.indices.reversed() {
            while deadInLane[lane] > 0, let head = lanes[lane].first, entries[head.id]?.lane != lane {
                lanes[lane].removeFirst()
                deadInLane[lane] -= 1
            }
            guard let head = lanes[lane].first else { continue }
            if highest == nil { highest = lane }
            if startsSoFar &- head.enqueuedAtStart >= agingThreshold,
                oldestAged.map({ head.order < $0.order }) ?? true
            {
                oldestAged = (lane, head.order)
            }
        }
        return oldestAged?.lane ?? highest
    }
}
