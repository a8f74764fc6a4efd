import DequeModule

/// The tasks ready to start: first in, first out within a priority, higher priorities first.
///
/// A lane per priority in use (a handful at most) instead of one heap: queueing and taking a
/// task are O(1) rather than O(log n), which matters when thousands become ready at once.
struct ReadyQueue {
    /// Highest priority first.
    private var lanes: [(priority: UInt8, nodes: Deque<Int32>)] = []
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    mutating func append(_ node: Int32, priority: UInt8) {
        count += 1
        // Most graphs use one priority, so the first lane almost always matches.
        for lane in lanes.indices where lanes[lane].priority <= priority {
            if lanes[lane].priority == priority {
                lanes[lane].nodes.append(node)
            } else {
                lanes.insert((priority, [node]), at: lane)
            }
            return
        }
        lanes.append((priority, [node]))
    }

    mutating func popFirst() -> Int32? {
        guard count > 0 else { return nil }
        for lane in lanes.indices {
            if let node = lanes[lane].nodes.popFirst() {
                count -= 1
                return node
            }
        }
        return nil
    }

    mutating func removeAll() {
        lanes.removeAll()
        count = 0
    }
}
