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
        // Grown geometrically: a run that gets a few nodes at a time (a launcher's additions)
        // would otherwise copy them all on every addition, under the run's lock.
        machine.table.nodes.reserveCapacity(growingToHold: first + newDefinitions.count)
        // A task records that it was queued, started and ended, and the run that it finished:
        // the journal grows once here instead of copying itself at every doubling while the
        // run goes. Without room for the run's last record, that one record alone doubled the
        // journal at the end of every run, copying all the others into freshly faulted pages.
        machine.journal.reserveCapacity(forAnother: 3 * newDefinitions.count + (first == 0 ? 1 : 0))
        if let compiled, machine.isRunning {
            insertCompiled(newDefinitions, compiled, into: &machine, now: now, effects: &effects)
            return
        }
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
                    let edge = GraphTopology.Edge(node: machine.topology.indexByID[id]!, requiresSuccess: true)
                    machine.topology.wire(edge, into: index, nodes: &machine.table.nodes)
                }
                for id in newDefinitions[offset].after {
                    let edge = GraphTopology.Edge(node: machine.topology.indexByID[id]!, requiresSuccess: false)
                    machine.topology.wire(edge, into: index, nodes: &machine.table.nodes)
                }
            }
        }
        var cascade: [Int32] = []
        for index in first..<machine.table.nodes.count where machine.table.nodes[index].remaining == 0 {
            cascade.append(Int32(index))
        }
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
        let made = GraphNodeTable.makeCompiled(newDefinitions, compiled, now: now)
        for marker in made.markers { registerMilestone(of: newDefinitions[Int(marker)], in: &machine) }
        var cascade = made.cascade
        // The first insertion: both are empty.
        machine.table.nodes = made.nodes
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

    private static func registerMilestone(of marker: NodeDefinition, in machine: inout GraphStateMachine) {
        guard case .marker(let name?, _) = marker.kind else { return }
        machine.milestones.register(name)
    }
}
