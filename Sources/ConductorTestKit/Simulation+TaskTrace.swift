public import Conductor

extension Simulation {
    /// Writes when each task of `run` starts and ends into the trace, so an exploration's
    /// failing seed shows the graph's own order without wrapping every body in
    /// ``traced(_:isolation:_:)``.
    ///
    /// ```swift
    /// let run = try graph.start(clock: simulation.clock)
    /// simulation.traceTasks(of: run)
    /// ```
    ///
    /// The entries are `"config started"`, `"config ended"`, `"images failed"`,
    /// `"images timed out"`, `"home skipped"`, `"home cancelled"`, `"feed retried"`, and
    /// `"milestone firstScreen"`. They are read from the run's event log by a task of the
    /// simulation, so they come in the run's order but a little after the fact: an entry that
    /// a body records itself can come before the `started` of its own task. The run itself
    /// is not changed, and a run outside a simulation pays nothing.
    public func traceTasks(of run: GraphRun) {
        follow(run.events)
    }

    /// Writes when each task of `launcher` starts and ends into the trace, as
    /// ``traceTasks(of:)-(GraphRun)`` does for a graph run; readiness sets appear as
    /// `"milestone …"`. Call it before or after the launch starts: the log is read from its
    /// first event.
    public func traceTasks(of launcher: Launcher) {
        follow(launcher.events)
    }

    private func follow(_ events: EventSequence<GraphEvent>) {
        // An unstructured task does not follow its starter's executor: ask for this one.
        Task(executorPreference: self) { [self] in
            for await event in events {
                if let entry = Self.entry(for: event) { record(entry) }
            }
        }
    }

    static func entry(for event: GraphEvent) -> String? {
        switch event {
        case .taskStarted(let id, let attempt, _): attempt == 1 ? "\(id) started" : "\(id) started (attempt \(attempt))"
        case .taskSucceeded(let id, _): "\(id) ended"
        case .taskFailed(let id, _, _): "\(id) failed"
        case .taskTimedOut(let id, _): "\(id) timed out"
        case .taskSkipped(let id, _, _): "\(id) skipped"
        case .taskCancelled(let id, _): "\(id) cancelled"
        case .taskRetried(let id, _, _, _, _): "\(id) retried"
        case .milestoneReached(let name, _): "milestone \(name)"
        case .taskQueued, .stageStarted, .runFinished: nil
        }
    }
}
