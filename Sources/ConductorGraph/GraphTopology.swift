/// What a run's nodes are and how they depend on each other: their definitions, settings and
/// index, and each node's successors. Only ever grows (a run's additions); it never changes
/// what a node is.
struct GraphTopology {
    /// A dependency or a successor, and whether its success is required: 4 bytes, not the 8 an
    /// Int32 and a Bool take in an array, where a run and its graph hold one per edge.
    struct Edge {
        /// The node, or its complement (negative) when the edge only needs it ended.
        private let raw: Int32

        init(node: Int32, requiresSuccess: Bool) { raw = requiresSuccess ? node : ~node }

        var node: Int32 { raw ^ (raw >> 31) }
        var requiresSuccess: Bool { raw >= 0 }
    }

    private(set) var definitions: [NodeDefinition] = []
    /// Each node's settings (nil for a marker), so taking a task never reads its definition.
    ///
    /// Unretained, which is safe: `definitions` holds every spec strongly and only grows, and
    /// this array lives and dies with it. Trivial elements, so building it for a run retains
    /// nothing per node, and taking a task neither retains nor releases its spec.
    private(set) var specs: [Unmanaged<TaskSpec>?] = []
    /// Positions by id (``NodeIndex``: the ids are those `definitions` hold).
    private(set) var index = NodeIndex()
    /// The successors of the nodes of a compiled graph's first insertion, flat: node `i`'s
    /// are `firstSuccessors[firstSuccessorStart[i] ..< firstSuccessorStart[i + 1]]`. One
    /// allocation for the whole graph instead of an array per node.
    private(set) var firstSuccessorStart: [Int32] = []
    private(set) var firstSuccessors: [Edge] = []
    /// Successors wired after the first insertion (a run's additions), by node.
    private(set) var addedSuccessors: [Int32: [Edge]] = [:]

    var count: Int { definitions.count }

    func id(of node: Int) -> String { definitions[node].id }

    /// The position of the node called `id`, if one is.
    func position(of id: String) -> Int32? { index.position(of: id, in: definitions) }

    /// Whether `node`'s settings ask for its body to run in a task of its own.
    func runsInOwnTask(_ node: Int) -> Bool {
        guard let spec = specs[node] else { return false }
        return spec._withUnsafeGuaranteedRef { $0.runsInOwnTask }
    }

    /// Adds definitions to the index: a compiled graph's first insertion takes its index as
    /// it is, so it hashes no id at all.
    mutating func index(_ newDefinitions: [NodeDefinition], compiled: CompiledGraph?) {
        let first = definitions.count
        if let compiled {
            definitions = newDefinitions
            index = compiled.index
        } else {
            // One definition (a task added to a running run) without the generic sequence append.
            if newDefinitions.count == 1 {
                definitions.append(newDefinitions[0])
            } else {
                definitions.append(contentsOf: newDefinitions)
            }
            index.reserveCapacity(definitions.count, in: definitions)
            for offset in newDefinitions.indices {
                index.insert(newDefinitions[offset].id, at: Int32(first + offset), in: definitions)
            }
        }
        // Grown geometrically: a run that gets a few nodes at a time (a launcher's additions)
        // would otherwise copy them all on every addition, under the run's lock.
        specs.reserveCapacity(growingToHold: definitions.count)
    }

    mutating func appendSpec(_ spec: Unmanaged<TaskSpec>?) { specs.append(spec) }

    /// The first insertion's specs, made in one pass with its nodes.
    mutating func setSpecs(_ newSpecs: [Unmanaged<TaskSpec>?]) { specs = newSpecs }

    /// Wires the first insertion of a compiled graph, whose nodes are `0 ..< compiled.count`,
    /// whose dependency counts are set and none of which has ended: lays the successors out
    /// flat (a counting sort by dependency).
    mutating func wireFlat(_ compiled: CompiledGraph, nodes: inout [GraphNodeTable.Node]) {
        let count = compiled.count
        var start = [Int32](repeating: 0, count: count + 1)
        var flat = [Edge](repeating: Edge(node: 0, requiresSuccess: false), count: compiled.dependencies.count)
        // Unsafe buffers: this runs once per node and edge at the start of every run, and
        // the checked subscripts cost more than the work.
        compiled.dependencyStart.withUnsafeBufferPointer { dependencyStart in
            compiled.dependencies.withUnsafeBufferPointer { dependencies in
                start.withUnsafeMutableBufferPointer { start in
                    nodes.withUnsafeMutableBufferPointer { nodes in
                        for edge in dependencies {
                            start[Int(edge.node) + 1] += 1
                            nodes[Int(edge.node)].flags.insert(.hasSuccessors)
                        }
                    }
                    for node in 0..<count { start[node + 1] += start[node] }
                }
                var next = start
                next.withUnsafeMutableBufferPointer { next in
                    flat.withUnsafeMutableBufferPointer { flat in
                        for node in 0..<count {
                            for position in Int(dependencyStart[node])..<Int(dependencyStart[node + 1]) {
                                let edge = dependencies[position]
                                let dependency = Int(edge.node)
                                flat[Int(next[dependency])] = Edge(
                                    node: Int32(node), requiresSuccess: edge.requiresSuccess)
                                next[dependency] += 1
                            }
                        }
                    }
                }
            }
        }
        firstSuccessorStart = start
        firstSuccessors = flat
    }

    /// Connects `node` to the dependency `edge` names: counted if it is still to end,
    /// otherwise its outcome is taken into account at once.
    mutating func wire(_ edge: Edge, into node: Int, nodes: inout [GraphNodeTable.Node]) {
        let dependency = Int(edge.node)
        if nodes[dependency].phase.hasEnded {
            if edge.requiresSuccess, nodes[node].blockedBy < 0, nodes[dependency].phase != .succeeded {
                nodes[node].blockedBy = edge.node
            }
            let last = nodes[node].lastDependency
            if last < 0 || nodes[dependency].endedAt >= nodes[Int(last)].endedAt {
                nodes[node].lastDependency = edge.node
            }
        } else {
            nodes[node].remaining += 1
            nodes[dependency].flags.insert(.hasSuccessors)
            let successor = Edge(node: Int32(node), requiresSuccess: edge.requiresSuccess)
            addedSuccessors[edge.node, default: []].append(successor)
        }
    }

    /// Whether `index` has successors beyond its flat table's position `end` (later
    /// additions wired to it).
    func hasAddedSuccessors(_ index: Int) -> Bool {
        !addedSuccessors.isEmpty && addedSuccessors[Int32(index)] != nil
    }

    /// Counts `index`'s end down in its successors — those of its flat table from `position`
    /// on (all of them without it), then those later additions wired to it — and appends
    /// those it leaves with nothing to wait for to `ready`.
    func releaseSuccessors(
        of index: Int, from position: Int?, nodes: inout [GraphNodeTable.Node], to ready: inout [Int32]
    ) {
        let succeeded = nodes[index].phase == .succeeded
        if index + 1 < firstSuccessorStart.count {
            let range = (position ?? Int(firstSuccessorStart[index]))..<Int(firstSuccessorStart[index + 1])
            if !range.isEmpty {
                // One uniqueness check for the loop, not one per field of every successor.
                firstSuccessors.withUnsafeBufferPointer { edges in
                    nodes.withUnsafeMutableBufferPointer { nodes in
                        for position in range {
                            Self.release(edges[position], from: index, succeeded: succeeded, in: nodes, to: &ready)
                        }
                    }
                }
            }
        }
        if !addedSuccessors.isEmpty, let added = addedSuccessors[Int32(index)] {
            nodes.withUnsafeMutableBufferPointer { nodes in
                for edge in added { Self.release(edge, from: index, succeeded: succeeded, in: nodes, to: &ready) }
            }
        }
    }

    private static func release(
        _ edge: Edge, from index: Int, succeeded: Bool, in nodes: UnsafeMutableBufferPointer<GraphNodeTable.Node>,
        to ready: inout [Int32]
    ) {
        let successor = Int(edge.node)
        guard nodes[successor].phase == .waiting else { return }
        if edge.requiresSuccess, !succeeded, nodes[successor].blockedBy < 0 {
            nodes[successor].blockedBy = Int32(index)
        }
        nodes[successor].lastDependency = Int32(index)
        nodes[successor].remaining -= 1
        if nodes[successor].remaining == 0 { ready.append(edge.node) }
    }
}
