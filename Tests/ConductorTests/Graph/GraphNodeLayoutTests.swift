import Testing

@testable import ConductorGraph

/// A pending task's memory is mostly its node: the node must not grow as the graph gains
/// features (the flags have room for them within the same stride).
@Suite struct GraphNodeLayoutTests {
    @Test func aNodeKeepsItsFortyEightByteStride() {
        #expect(MemoryLayout<GraphNodeTable.Node>.stride == 48)
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
}
