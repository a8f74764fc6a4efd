/// The tasks ready to start: first in, first out within a priority, higher priorities first.
///
/// A lane per priority in use (a handful at most) instead of one heap: queueing and taking a
/// task are O(1) rather than O(log n), which matters when thousands become ready at once.
/// The roots of a run's first insertion — every node of an independent graph — are not
/// queued one by one: they stay in one array, highest priority first, taken by a cursor.
///
/// Not Core's `PriorityLanes`, which the scheduler and the gate share: a ready node is queued
/// once and taken once, never cancelled in place or raised (a removed node is skipped when
/// taken), and nothing ages, so this needs none of its ids, dictionary, tombstones or aging
/// check, each of which would cost on every task of the graph's hot path.
struct ReadyQueue {
    /// Above every task priority, for tasks that hold something while they wait for a place:
    /// a joining parent taking its place back, a task that holds all its limits' places. They
    /// go first, so they hold it no longer than they must.
    static let frontPriority: UInt8 = .max

    struct Root {
        var node: Int32
        var priority: UInt8
    }

    /// The tasks of one priority, in the order they became ready: an array and the position
    /// of the first not yet taken. Appending is an array's append, the cheapest there is (a
    /// ring buffer does more work on each append and pop); the array starts over whenever
    /// the lane empties, and until then holds 4 bytes for each task it has had — at most one
    /// entry per node of the run, which is queued once.
    struct Lane {
        let priority: UInt8
        private var nodes: [Int32]
        private var head = 0

        init(priority: UInt8, first: Int32) {
            self.priority = priority
            nodes = [first]
        }

        var isEmpty: Bool { head == nodes.count }

        mutating func append(_ node: Int32) { nodes.append(node) }

        mutating func popFirst() -> Int32? {
            guard head < nodes.count else { return nil }
            let node = nodes[head]
            head += 1
            if head == nodes.count {
                nodes.removeAll(keepingCapacity: true)
                head = 0
            }
            return node
        }
    }

    /// The lane of the highest priority queued so far (it may be empty), kept out of
    /// `lowerLanes`: almost every graph uses one priority, and a lane inside an array is
    /// written through a uniqueness check of the array as well as one of its own — one check
    /// more for every task queued and every task taken.
    private var topLane: Lane?
    /// The lanes of lower priorities than `topLane`'s, highest first.
    private var lowerLanes: [Lane] = []
    /// The first insertion's roots, highest priority first and in insertion order within a
    /// priority; those before `rootCursor` have been taken.
    private var roots: [Root] = []
    private var rootCursor = 0
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    init() {}

    /// Takes the first insertion's roots, in the order they were queued; only while the queue
    /// is empty. Every root was queued before anything else, so it goes before any task of its
    /// priority queued later.
    mutating func setRoots(_ newRoots: [Root], samePriority: Bool) {
        precondition(count == 0 && roots.isEmpty, "roots are set once, on an empty queue")
        roots = newRoots
        // Stable: within a priority, insertion order. Graphs with one priority skip it.
        if !samePriority {
            roots = newRoots.enumerated().sorted { left, right in
                left.element.priority != right.element.priority
                    ? left.element.priority > right.element.priority : left.offset < right.offset
            }.map(\.element)
        }
        rootCursor = 0
        count = roots.count
    }

    /// Inlined: most graphs use one priority, so the top lane almost always matches.
    @inline(__always)
    mutating func append(_ node: Int32, priority: UInt8) {
        count += 1
        if topLane?.priority == priority {
            topLane?.append(node)
            return
        }
        appendToLane(node, priority: priority)
    }

    @inline(never)
    private mutating func appendToLane(_ node: Int32, priority: UInt8) {
        guard let top = topLane else {
            topLane = Lane(priority: priority, first: node)
            return
        }
        if priority > top.priority {
            lowerLanes.insert(top, at: 0)
            topLane = Lane(priority: priority, first: node)
            return
        }
        for lane in lowerLanes.indices where lowerLanes[lane].priority <= priority {
            if lowerLanes[lane].priority == priority {
                lowerLanes[lane].append(node)
            } else {
                lowerLanes.insert(Lane(priority: priority, first: node), at: lane)
            }
            return
        }
        lowerLanes.append(Lane(priority: priority, first: node))
    }

    @inline(__always)
    mutating func popFirst() -> Int32? {
        guard count > 0 else { return nil }
        if rootCursor < roots.count {
            let root = roots[rootCursor]
            // A lane goes first only with a higher priority: at equal priority, the root was
            // queued earlier.
            if !hasTasks(above: root.priority) {
                rootCursor += 1
                count -= 1
                return root.node
            }
        }
        if let node = topLane?.popFirst() {
            count -= 1
            return node
        }
        return popFromLowerLanes()
    }

    /// Whether a lane of a higher priority than `priority` holds a task.
    private func hasTasks(above priority: UInt8) -> Bool {
        if let topLane, topLane.priority > priority, !topLane.isEmpty { return true }
        return lowerLanes.contains { $0.priority > priority && !$0.isEmpty }
    }

    /// Out of line: reached only when the top lane is empty.
    @inline(never)
    private mutating func popFromLowerLanes() -> Int32? {
        for lane in lowerLanes.indices {
            if let node = lowerLanes[lane].popFirst() {
                count -= 1
                return node
            }
        }
        return nil
    }

    mutating func removeAll() {
        topLane = nil
        lowerLanes.removeAll(keepingCapacity: true)
        roots.removeAll()
        rootCursor = 0
        count = 0
    }
}
