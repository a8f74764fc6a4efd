import Testing

@testable import ConductorAssembly
@testable import ConductorCore
@testable import ConductorGate
@testable import ConductorGraph
@testable import ConductorHarmonizer
@testable import ConductorLaunch
@testable import ConductorReports

/// The ready queue against the rule it keeps, on random operations: higher priorities first;
/// within a priority, first in, first out, the first insertion's roots before anything queued
/// later. The reference is a plain list searched for its best entry.
@Suite struct ReadyQueueTests {
    private struct Reference {
        /// (node, priority, order queued)
        var entries: [(node: Int32, priority: UInt8, order: Int)] = []
        var next = 0

        mutating func append(_ node: Int32, priority: UInt8) {
            entries.append((node, priority, next))
            next += 1
        }

        mutating func popFirst() -> Int32? {
            guard
                let best = entries.indices.min(by: { left, right in
                    let (a, b) = (entries[left], entries[right])
                    return a.priority != b.priority ? a.priority > b.priority : a.order < b.order
                })
            else { return nil }
            return entries.remove(at: best).node
        }
    }

    @Test(arguments: 0..<200)
    func takesTasksByPriorityThenInTheOrderTheyWereQueued(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        // A few priorities, as a graph has (most use one).
        let priorities: [UInt8] = Array([25, 21, 17, 9].prefix(Int.random(in: 1...4, using: &random)))
        var queue = ReadyQueue()
        var reference = Reference()
        var node: Int32 = 0
        let rootCount = Int.random(in: 0...20, using: &random)
        if rootCount > 0 {
            var roots: [ReadyQueue.Root] = []
            for _ in 0..<rootCount {
                let priority = priorities.randomElement(using: &random)!
                roots.append(ReadyQueue.Root(node: node, priority: priority))
                reference.append(node, priority: priority)
                node += 1
            }
            queue.setRoots(roots, samePriority: Set(roots.map(\.priority)).count == 1)
        }
        for _ in 0..<300 {
            if Bool.random(using: &random) {
                let priority = priorities.randomElement(using: &random)!
                queue.append(node, priority: priority)
                reference.append(node, priority: priority)
                node += 1
            } else {
                #expect(queue.popFirst() == reference.popFirst(), "seed \(seed)")
            }
            #expect(queue.count == reference.entries.count)
            #expect(queue.isEmpty == reference.entries.isEmpty)
        }
        while let expected = reference.popFirst() {
            #expect(queue.popFirst() == expected, "seed \(seed)")
        }
        #expect(queue.popFirst() == nil)
    }
}
