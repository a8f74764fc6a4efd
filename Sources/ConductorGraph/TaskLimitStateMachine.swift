/// The pure core of a ``TaskLimit``: how many places are in use, and the requests that wait
/// for one, highest priority first and first come first within a priority. No locks, no runs:
/// each operation returns what was granted, and the limit hands that on once it has released
/// its lock.
///
/// No barging: a request is granted at once only if a place is free *and* nobody waits, so a
/// burst of requests from one run never overtakes a request of another run queued earlier at
/// the same priority, nor one of a higher priority.
///
/// ```swift
/// var limit = TaskLimitStateMachine<Int, String>(capacity: 1)
/// limit.acquire(.init(id: 1, rank: 21, payload: "a"))  // "a": granted at once
/// limit.acquire(.init(id: 2, rank: 17, payload: "b"))  // nil: queued
/// limit.acquire(.init(id: 3, rank: 25, payload: "c"))  // nil: queued, ahead of "b"
/// limit.release(1)                                     // ["c"]
/// ```
struct TaskLimitStateMachine<ID: Hashable, Payload> {
    struct Request {
        var id: ID
        /// `TaskPriority.rawValue`: higher goes first.
        var rank: UInt8
        var payload: Payload
    }

    /// What a cancelled request had become.
    enum Cancelled: Equatable {
        /// It waited, and now never will be granted.
        case removedFromQueue
        /// It is not queued: it was granted (the grant is on its way to its run, which gives it
        /// back), or it has not arrived yet.
        case alreadyGranted
    }

    let capacity: Int
    /// Places held: granted and not given back.
    private(set) var inUse = 0
    /// The requests of one priority, in arrival order: an array and the position of the first
    /// not yet granted, so granting is O(1) (the array starts over whenever the lane empties).
    fileprivate struct Lane {
        let rank: UInt8
        var requests: [Request]
        var head = 0

        var count: Int { requests.count - head }

        mutating func popFirst() -> Request {
            let request = requests[head]
            head += 1
            if head == requests.count {
                requests.removeAll(keepingCapacity: true)
                head = 0
            }
            return request
        }
    }

    /// The waiting requests: one lane per priority in use, highest first. A handful of lanes
    /// at most, as in a run's ready queue.
    private var lanes: [Lane] = []

    init(capacity: Int) { self.capacity = capacity }

    /// How many requests wait.
    var waiting: Int { lanes.reduce(0) { $0 + $1.count } }

    /// Grants `request` at once if a place is free and nobody waits; queues it otherwise.
    /// Returns the granted payload.
    mutating func acquire(_ request: Request) -> Payload? {
        if inUse < capacity, lanes.isEmpty {
            inUse += 1
            return request.payload
        }
        enqueue(request)
        return nil
    }

    private mutating func enqueue(_ request: Request) {
        for lane in lanes.indices where lanes[lane].rank <= request.rank {
            if lanes[lane].rank == request.rank {
                lanes[lane].requests.append(request)
            } else {
                lanes.insert(Lane(rank: request.rank, requests: [request]), at: lane)
            }
            return
        }
        lanes.append(Lane(rank: request.rank, requests: [request]))
    }

    /// Takes request `id` out of the queue if it waits there.
    ///
    /// - Complexity: O(n) in the waiting requests: a cancel is rare (a removal, a stop, a pause).
    mutating func cancel(_ id: ID) -> Cancelled {
        for lane in lanes.indices {
            let waiting = lanes[lane].requests[lanes[lane].head...]
            guard let position = waiting.firstIndex(where: { $0.id == id }) else { continue }
            lanes[lane].requests.remove(at: position)
            if lanes[lane].count == 0 { lanes.remove(at: lane) }
            return .removedFromQueue
        }
        return .alreadyGranted
    }

    /// Gives `count` places back; the places now free go to the queue's heads, highest
    /// priority first. Returns their payloads, in the order granted.
    mutating func release(_ count: Int) -> [Payload] {
        precondition(count <= inUse, "a limit got back more places than it granted")
        inUse -= count
        var granted: [Payload] = []
        while inUse < capacity, !lanes.isEmpty {
            let request = lanes[0].popFirst()
            if lanes[0].count == 0 { lanes.removeFirst() }
            inUse += 1
            granted.append(request.payload)
        }
        return granted
    }
}

extension TaskLimitStateMachine: Sendable where ID: Sendable, Payload: Sendable {}
extension TaskLimitStateMachine.Request: Sendable where ID: Sendable, Payload: Sendable {}
extension TaskLimitStateMachine.Lane: Sendable where ID: Sendable, Payload: Sendable {}
