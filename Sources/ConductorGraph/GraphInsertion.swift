/// How definitions join a run's machine: indexed, made into nodes, wired to what they depend
/// on, and the ones with nothing left to wait for released. A graph built in dependency order
/// hands over its index and its edges already resolved (``CompiledGraph``), so the first
/// insertion hashes no id at all.
enum GraphInsertion {
    /// Adds validated definitions to `machine` (see ``GraphStateMachine/insert(_:compiled:now:effects:)``).
    static func insert(
        _ newDefinitions: [NodeDefinition],
        compiled: CompiledGraph?,
        into machine: inout GraphStateMachine,
        now: Int64,
        effects: inout GraphEffects
    ) {
        let first = machine.table.nodes.count
        let compiled = first == 0 && compiled?.count == newDefinitions.count ? compiled : nil
        machine.topology.index(newDefinitions, compiled: compiled)
        if let compiled, machine.isRunning {
            insertCompiled(newDefinitions, compiled, into: &machine, now: now, effects: &effects)
            return
        }
        // Grown geometrically: a run that gets a few nodes at a time (a launcher's additions)
        // would otherwise copy them all on every addition, under the run's lock.
        machine.table.nodes.reserveCapacity(growingToHold: first + newDefinitions.count)
        for offset in newDefinitions.indices {
            // Field by field: the definition itself is never copied.
            let spec = newDefinitions[offset].spec
            machine.table.nodes.append(GraphNodeTable.Node(spec: spec, isHidden: newDefinitions[offset].isHidden))
            machine.topology.appendSpec(spec.map(Unmanaged.passUnretained))
            if spec == nil { registerMilestone(of: newDefinitions[offset], in: &machine) }
        }
        machine.table.grow(by: newDefinitions.count)
        if let compiled {
            for node in 0..<compiled.count {
                machine.table.nodes[node].remaining =
                    compiled.dependencyStart[node + 1] - compiled.dependencyStart[node]
            }
            machine.topology.wireFlat(compiled, nodes: &machine.table.nodes)
        } else {
            for offset in newDefinitions.indices {
                let index = first + offset
                for id in newDefinitions[offset].requires {
                    let edge = GraphTopology.Edge(node: machine.topology.position(of: id)!, requiresSuccess: true)
                    machine.topology.wire(edge, into: index, nodes: &machine.table.nodes)
                }
                for id in newDefinitions[offset].after {
                    let edge = GraphTopology.Edge(node: machine.topology.position(of: id)!, requiresSuccess: false)
                    machine.topology.wire(edge, into: index, nodes: &machine.table.nodes)
                }
            }
        }
        var cascade: [Int32] = []
        for index in first..<machine.table.nodes.count where machine.table.nodes[index].remaining == 0 {
            cascade.append(Int32(index))
        }
        reserveJournal(forReady: cascade.count, into: &machine, first: first)
        machine.release(&cascade, now: now, effects: &effects)
        machine.wakeDriverIfNeeded(&effects)
        machine.finishIfDone(now: now, effects: &effects)
    }

    /// The first insertion of a compiled graph into a running machine, in one pass over the
    /// nodes: each node is made with its dependency count, and a task with none is queued on
    /// the spot — into the ready queue's roots, taken by a cursor, not into a lane one by one.
    /// From the first root marker on, roots go through ``release(_:now:effects:)`` instead,
    /// so the events stay in the order of the nodes whatever the kinds.
    private static func insertCompiled(
        _ newDefinitions: [NodeDefinition], _ compiled: CompiledGraph, into machine: inout GraphStateMachine,
        now: Int64, effects: inout GraphEffects
    ) {
        var made = GraphNodeTable.makeCompiled(newDefinitions, compiled, now: now)
        for marker in made.markers { registerMilestone(of: newDefinitions[Int(marker)], in: &machine) }
        var cascade = made.cascade
        reserveJournal(forReady: made.roots.count + cascade.count, into: &machine, first: 0)
        // The first insertion: both are empty. Moved, not copied: a second reference left in
        // `made` would make wiring copy the whole node table.
        swap(&machine.table.nodes, &made.nodes)
        machine.topology.setSpecs(made.specs)
        // Each root's `queued`, in node order as the loop found them, in one append: the loop
        // records nothing else, and the cascade's events follow in `release`.
        machine.journal.appendLeavingReaders(contentsOf: made.roots.lazy.map { .queued(node: $0.node, at: now) })
        machine.topology.wireFlat(compiled, nodes: &machine.table.nodes)
        if !made.roots.isEmpty { machine.readyQueue.setRoots(made.roots, samePriority: made.samePriority) }
        machine.release(&cascade, now: now, effects: &effects)
        machine.wakeDriverIfNeeded(&effects)
        machine.finishIfDone(now: now, effects: &effects)
    }

    /// Makes room in the journal for what `ready` nodes ready at once will record (queued,
    /// started, ended) and, on the first insertion, the run's last record, so a graph of
    /// independent tasks records them all without the journal copying itself at a doubling.
    /// Nodes still waiting get no room: a run of many pending tasks would hold 48 bytes a task
    /// for records they have not made; the first task to start without room makes it for every
    /// node yet to end (``GraphStateMachine`` `takeNext`), one copy of the journal.
    private static func reserveJournal(forReady ready: Int, into machine: inout GraphStateMachine, first: Int) {
        machine.journal.reserveCapacity(forAnother: 3 * ready + (first == 0 ? 1 : 0))
    }

    private static func registerMilestone(of marker: NodeDefinition, in machine: inout GraphStateMachine) {
        guard case .marker(let name?, _) = marker.kind else { return }
        machine.milestones.register(name)
    }
}
