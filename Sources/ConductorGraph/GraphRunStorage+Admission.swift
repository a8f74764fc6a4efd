/// Shared limits and pausing, on the storage's side: each a transition under the run's lock;
/// what it leaves for the limits is done once that lock is released
/// (``TaskLimit/perform(_:for:)``, which also hands grants over) — the run's lock and a limit's are never held together.
extension GraphRunStorage {
    /// Pauses (``GraphRun/pause()``). Returns the journal's end right after: the index of the
    /// first event recorded while paused, for tests.
    @discardableResult
    package func pause() -> Int {
        var effects = GraphEffects()
        let index = transition { machine in
            machine.admissions.pause(
                isRunning: machine.isRunning, table: &machine.table, workers: &machine.workers, effects: &effects)
            return machine.journal.endIndex
        }
        apply(effects)
        return index
    }

    /// Resumes (``GraphRun/resume()``). Returns the journal's end just before: every event
    /// before it was recorded before the resume, for tests.
    @discardableResult
    package func resume() -> Int {
        var effects = GraphEffects()
        let index = transition { machine in
            let index = machine.journal.endIndex
            machine.admissions.resume(
                isRunning: machine.isRunning, table: machine.table, workers: &machine.workers, effects: &effects)
            machine.wakeDriverIfNeeded(&effects)
            return index
        }
        apply(effects)
        return index
    }

    var isPaused: Bool { state.withLock { $0.admissions.isPaused } }
}
