/// Subtasks and the parents that join them (``TaskContext/addSubtask(_:dependsOn:options:_:)``,
/// ``TaskContext/join()``).
///
/// A parent that joins while a subtask has not ended gives its place in the run's
/// `concurrencyLimit` back and parks; a hidden marker after its subtasks stands for the join.
/// When the marker is reached the parent takes a place back before any task starts: at once
/// if one is free, or as the next task the run hands out (its node goes to the front of the
/// ready queue, and ``GraphStateMachine`` resumes it where it would start a task). So a join
/// under `concurrencyLimit: 1` cannot deadlock: the parent's place is given back in the
/// transition that parks it, and the last subtask gives its own back before its end reaches
/// the marker. Markers go through the general release only, so none of this touches the path
/// of a task that adds no subtask.
struct GraphJoins {
    /// The subtasks of each parent's current attempt, by parent node.
    private var children: [Int32: (attempt: Int32, nodes: [Int32])] = [:]
    /// Parents waiting in `join()`, by parent node, and whether each gave its place back.
    private var parked: [Int32: (waiter: WaiterSet<Void>.Waiter, gaveBack: Bool)] = [:]
    /// Each join marker's parent, by marker node.
    private var markers: [Int32: Int32] = [:]
    /// Parents whose subtasks have ended, queued to take a place back.
    private var waitingForPlace: Set<Int32> = []
    /// How many joins the run has made: each marker's id is new.
    private var count = 0

    /// The subtask `node` was added by attempt `attempt` of `parent`.
    mutating func added(_ node: Int, by parent: Int, attempt: Int) {
        let attempt = Int32(clamping: attempt)
        if children[Int32(parent)]?.attempt != attempt { children[Int32(parent)] = (attempt, []) }
        children[Int32(parent)]!.nodes.append(Int32(node))
    }

    /// The subtasks attempt `attempt` of `parent` has added.
    func subtasks(of parent: Int, attempt: Int) -> [Int32] {
        guard let entry = children[Int32(parent)], entry.attempt == Int32(clamping: attempt) else { return [] }
        return entry.nodes
    }

    /// Attempt `attempt` of `parent` joins: goes on at once (returns `false`) when every
    /// subtask it added has ended or the run is stopping; otherwise parks it behind a hidden
    /// marker after those subtasks, giving its place back.
    static func join(
        _ parent: Int, attempt: Int, waiter: WaiterSet<Void>.Waiter, now: Int64, in machine: inout GraphStateMachine,
        effects: inout GraphEffects
    ) -> Bool {
        let pending = machine.joins.subtasks(of: parent, attempt: attempt).filter {
            !machine.table.nodes[Int($0)].phase.hasEnded
        }
        // Not a body its run has stopped waiting for (abandoned, or ended by a removal).
        guard machine.isRunning, !pending.isEmpty, machine.table.nodes[parent].phase == .running,
            machine.table.attempts(of: parent) == Int32(clamping: attempt)
        else { return false }
        // A body in a task of its own (a timeout) keeps its place: its worker, which waits for
        // it, gives it back when the attempt ends, whether or not the body has returned.
        // A body that can be let go (a task of its own, a deadline) keeps its place: letting it
        // go gives the place back.
        let givesBack =
            !machine.topology.runsInOwnTask(parent) && !machine.table.nodes[parent].flags.contains(.hasDeadline)
        machine.joins.count += 1
        let marker = NodeDefinition(
            id: "\u{1}join:\(parent)#\(machine.joins.count)", requires: [],
            after: pending.map { machine.topology.id(of: Int($0)) }, kind: .marker(milestone: nil, startsStage: nil),
            stage: nil, isHidden: true)
        machine.joins.markers[Int32(machine.table.nodes.count)] = Int32(parent)
        machine.joins.parked[Int32(parent)] = (waiter, givesBack)
        if givesBack { machine.workers.running -= 1 }
        machine.insert([marker], now: now, effects: &effects)
        return true
    }

    /// Marker `node` was reached: if it is a join's, its parent takes a place back now, or
    /// queues for the next one.
    static func markerReached(_ node: Int, in machine: inout GraphStateMachine, effects: inout GraphEffects) {
        guard let parent = machine.joins.markers.removeValue(forKey: Int32(node)) else { return }
        if machine.workers.hasSlot || machine.joins.parked[parent]?.gaveBack == false {
            takePlace(parent, in: &machine, effects: &effects)
        } else {
            machine.joins.waitingForPlace.insert(parent)
            machine.readyQueue.append(parent, priority: ReadyQueue.frontPriority)
        }
    }

    /// The ready queue handed out `node`, which is not a ready task: if it is a parent waiting
    /// for a place, it takes the place. Returns whether it did.
    static func placeFreed(for node: Int32, in machine: inout GraphStateMachine, effects: inout GraphEffects)
        -> Bool
    {
        guard !machine.joins.waitingForPlace.isEmpty, machine.joins.waitingForPlace.remove(node) != nil else {
            return false
        }
        takePlace(node, in: &machine, effects: &effects)
        return true
    }

    /// The run stops: every parked parent is resumed (its `join()` throws), taking its place
    /// back, so its own end gives back exactly one.
    static func stopped(in machine: inout GraphStateMachine, effects: inout GraphEffects) {
        guard !machine.joins.parked.isEmpty else { return }
        for parent in machine.joins.parked.keys { takePlace(parent, in: &machine, effects: &effects) }
        machine.joins.waitingForPlace.removeAll()
        machine.joins.markers.removeAll()
    }

    private static func takePlace(_ parent: Int32, in machine: inout GraphStateMachine, effects: inout GraphEffects) {
        guard let (waiter, gaveBack) = machine.joins.parked.removeValue(forKey: parent) else { return }
        if gaveBack { machine.workers.running += 1 }
        effects.resume([waiter])
    }
}
