/// The run's one timer task for the deadlines of bodies that run on their workers
/// (``GraphDeadlines``): it sleeps until the earliest deadline, then ends every task due in
/// one transition of the run, and sleeps again — or ends when nothing is pending, when the run
/// stops or finishes (which cancel it), or when a deadline earlier than its wake replaces it.
///
/// It holds its run weakly while it sleeps, so a run nobody holds any more is freed, and its
/// timer ends at its next wake.
enum GraphDeadlineTimer {
    /// Starts timer `start.generation`, outside the run's lock.
    static func start(_ start: GraphDeadlines.TimerStart, for storage: GraphRunStorage) {
        start.replaced?.cancel()
        let clock = storage.clock.purpose(.taskTimeout)
        let (generation, wake) = (start.generation, start.wake)
        // Detached: the timer serves every task of the run, so it takes none's task-locals.
        let run: @Sendable () -> GraphRunStorage? = { [weak storage] in storage }
        let task = Task.detached(executorPreference: TaskPlacement.executor) {
            await Self.run(generation, firstWake: wake, clock: clock, storage: run)
        }
        if !storage.state.withLock({ $0.deadlines.attach(task, generation: generation) }) { task.cancel() }
    }

    private static func run(
        _ generation: UInt64, firstWake: Int64, clock: ClockSource, storage: @Sendable () -> GraphRunStorage?
    ) async {
        var wake = firstWake
        while true {
            do {
                try await clock.sleep(until: .nanoseconds(wake))
            } catch {
                storage()?.state.withLock { $0.deadlines.timerEnded(generation) }
                return
            }
            guard let run = storage() else { return }
            let now = run.clock.nanoseconds
            guard let next = run.update({ GraphDeadlines.due(generation, now: now, in: &$0, effects: &$1) }) else {
                return
            }
            wake = next
        }
    }
}
