import Testing

@testable import ConductorGraph

/// A pending task's memory is mostly its node: the node must not grow as the graph gains
/// features (the flags have room for them within the same stride).
@Suite struct GraphNodeLayoutTests {
    @Test func aNodeKeepsItsFortyEightByteStride() {
        #expect(MemoryLayout<GraphNodeTable.Node>.stride == 48)
    }
}
