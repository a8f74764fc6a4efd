import Testing

@testable import ConductorGraph

/// The run's and the compiled graph's index of positions by id: an open-addressing table whose
/// keys are the ids the definitions hold (issue 36, memory per pending task).
@Suite struct NodeIndexTests {
    private static func definitions(_ ids: [String]) -> [NodeDefinition] {
        var graph = TaskGraph()
        for id in ids { graph.add(id) { _ in } }
        return graph.definitions
    }

    /// Every id is found at its position through several growths, a missing one is not, and a
    /// repeated id is refused without being counted.
    @Test func findsEveryIdThroughGrowthAndRefusesRepeats() {
        // Long ids too (not small strings), and ids that differ only late.
        let ids = (0..<5_000).map { $0 % 2 == 0 ? "t\($0)" : "a-rather-long-task-identifier-\($0)" }
        let definitions = Self.definitions(ids)
        var index = NodeIndex()
        for position in ids.indices {
            let added = index.insert(ids[position], at: Int32(position), in: definitions)
            #expect(added)
        }
        #expect(index.count == ids.count)
        for position in ids.indices {
            #expect(index.position(of: ids[position], in: definitions) == Int32(position))
        }
        #expect(index.position(of: "t1", in: definitions) == nil)
        #expect(index.position(of: "", in: definitions) == nil)
        let repeated = index.insert("t0", at: 7, in: definitions)
        #expect(!repeated)
        #expect(index.count == ids.count)
        #expect(index.position(of: "t0", in: definitions) == 0)
    }

    /// An empty index finds nothing, and a reservation keeps every entry.
    @Test func anEmptyIndexFindsNothingAndReservingKeepsEntries() {
        let definitions = Self.definitions(["a", "b", "c"])
        var index = NodeIndex()
        #expect(index.position(of: "a", in: definitions) == nil)
        index.insert("a", at: 0, in: definitions)
        index.insert("b", at: 1, in: definitions)
        index.reserveCapacity(1_000, in: definitions)
        index.insert("c", at: 2, in: definitions)
        #expect(index.position(of: "a", in: definitions) == 0)
        #expect(index.position(of: "b", in: definitions) == 1)
        #expect(index.position(of: "c", in: definitions) == 2)
        #expect(index.count == 3)
    }

    /// A graph with a repeated id is not compiled (validation then reports it).
    @Test func aCompiledGraphGivesUpOnARepeatedId() {
        let definitions = Self.definitions(["a", "b", "a"])
        #expect(!CompiledGraph(definitions).isComplete)
        #expect(CompiledGraph(Array(definitions.prefix(2))).isComplete)
    }
}
