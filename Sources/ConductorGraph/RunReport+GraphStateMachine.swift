extension RunReport {
    /// The report of a finished run, read from its state machine. Its task records are made
    /// from a copy of the final state only if someone reads them.
    init(of machine: GraphStateMachine) {
        let table = machine.table
        var last = table.lastEnded
        if case .failed(let error)? = machine.outcome, let id = error.taskID,
            let failing = machine.topology.position(of: id)
        {
            // A failed run ends at the required task that ended it, whatever ended later (an
            // optional task's body still running, tasks cancelled by the stop).
            last = Int(failing)
        }
        let topology = machine.topology
        self.init(
            outcome: machine.outcome ?? .cancelled,
            records: TaskRecords {
                GraphNodeTable.taskRecords(table: table, topology: topology)
            },
            milestones: machine.milestones.reached,
            duration: .nanoseconds(machine.finishedAt),
            criticalPath: table.criticalPath(endingAt: last, definitions: topology.definitions)
        )
    }
}
