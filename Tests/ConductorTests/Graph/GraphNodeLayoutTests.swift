import Testing

@testable import ConductorGraph

/// A pending task's memory is mostly its node: the node must not grow as the graph gains
/// features (the flags have room for them within the same stride).
@Suite struct GraphNodeLayoutTests {
    @Test func aNodeKeepsItsFortyByteStride() {
        #expect(MemoryLayout<GraphNodeTable.Node>.stride == 40)
    }

    /// A run holds an edge per successor and its graph one per dependency: one Int32 each, the
    /// node and whether its success is required.
    @Test func anEdgeIsFourBytesAndKeepsBothFacts() {
        #expect(MemoryLayout<GraphTopology.Edge>.stride == 4)
        for node: Int32 in [0, 1, 41, Int32.max - 1] {
            for required in [true, false] {
                let edge = GraphTopology.Edge(node: node, requiresSuccess: required)
                #expect(edge.node == node)
                #expect(edge.requiresSuccess == required)
            }
        }
    }

    /// A graph holds one spec per task: a plain one (no timeout, retry or limits) keeps its
    /// yes-or-no settings packed and no field for the rest (`conductor-bench bytes` counts its
    /// size); one with them keeps them all.
    @Test func aPlainSpecPacksItsSettingsAndARareOneKeepsThemAll() {
        let plain = TaskSpec.make(operation: .globalVoid { _ in }, options: TaskOptions(), returnsVoid: true)
        #expect(plain.isPlain && plain.returnsVoid && !plain.runsInOwnTask && !plain.needsAdmission)
        #expect(plain.timeout == nil && plain.retry == .never && plain.limits.isEmpty)
        let limit = TaskLimit(2, name: "l")
        let rare = TaskSpec.make(
            operation: .global { _ in 1 },
            options: TaskOptions(timeout: .seconds(3), retry: .attempts(2), limits: [limit]))
        #expect(rare.timeout == .seconds(3) && rare.timeoutNanoseconds == 3_000_000_000)
        #expect(rare.retry == .attempts(2) && rare.limits == [limit])
        #expect(rare.needsAdmission && rare.runsInOwnTask && !rare.isPlain && !rare.returnsVoid)
    }
}
