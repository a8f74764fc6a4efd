extension RunReport {
    /// A lane per task that ran, so that tasks overlapping in time never share one: lane 0
    /// is the main actor; the others are filled greedily in start order. A trace viewer draws
    /// each lane as a thread.
    ///
    /// - Complexity: O(n log n + n · lanes).
    var lanes: [String: Int] {
        let ran = tasks.filter { $0.startedAt != nil }.sorted { $0.startedAt! < $1.startedAt! }
        var laneEnds: [Duration] = []
        var lanes: [String: Int] = [:]
        for task in ran {
            guard task.placement != "main actor" else {
                lanes[task.id] = 0
                continue
            }
            let start = task.startedAt!
            if let free = laneEnds.firstIndex(where: { $0 <= start }) {
                laneEnds[free] = task.endedAt
                lanes[task.id] = free + 1
            } else {
                laneEnds.append(task.endedAt)
                lanes[task.id] = laneEnds.count
            }
        }
        return lanes
    }
}
