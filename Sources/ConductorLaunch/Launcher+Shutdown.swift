extension Launcher {
    /// Undoes the launch: calls ``StartupTask/undo()`` on every task that succeeded, in the
    /// reverse of the order they completed, and returns what happened.
    ///
    /// ```swift
    /// try await launcher.run()
    /// // … serve …
    /// let shutdown = await launcher.shutdown()
    /// if !shutdown.isSuccess { logger.warning("\(shutdown)") }
    /// ```
    ///
    /// - A task is undone only after every task that depended on it (through its
    ///   dependencies, a readiness set, or the order tasks were added in, for those added
    ///   ``TaskDependencies/inOrderOfAddition``) has been undone; undos independent of each other run concurrently.
    /// - Each undo has the launcher's `undoTimeout`, measured on its clock: past it, the undo
    ///   is cancelled, abandoned and reported as timed out. An undo that throws is reported as
    ///   failed. Either way the shutdown goes on with the rest: nothing is skipped (unless the
    ///   shutdown is cancelled, below).
    /// - Tasks that failed, were skipped or cancelled, or never ran, are not undone.
    /// - If the launch is still running, it is cancelled first (as ``cancel()`` does) and the
    ///   shutdown undoes what had succeeded by then. Before ``start()``, there is nothing to
    ///   undo, and a later launch starts cancelled.
    /// - It runs once: a second call, from anywhere, waits for the first one's report. Only
    ///   the first call can cut the shutdown short: cancelling a second caller's task does not
    ///   end its wait, which lasts as long as the first call's undos (each up to `undoTimeout`).
    ///   So call it from one place — in a `ServiceGroup`, let `LauncherService` be the one.
    /// - Cancelling the first call's task cuts the shutdown short at once, whatever
    ///   `undoTimeout` is: each running undo is cancelled and no longer waited for (one that
    ///   ignores cancellation is abandoned, and may still be running after this returns), and
    ///   the undos not begun yet are not called at all, so none begins before what depends on
    ///   it has been undone. All of them are reported ``UndoOutcome/cancelled`` — cut short,
    ///   which is not a failure (see ``ShutdownReport/isSuccess``). So a cancelled
    ///   `ServiceGroup` — whose `maximumCancellationDuration` ends the process if its services
    ///   take longer — is not held up by a hanging undo.
    ///
    /// The report is also the launch report's ``LaunchReport/shutdown`` from then on, so
    /// ``TimelineRenderer`` draws it under the launch.
    ///
    /// - Complexity: O(n²) in the number of succeeded tasks to order them; one timer task
    ///   for every undo's deadline.
    @discardableResult
    public func shutdown() async -> ShutdownReport {
        guard case .first(let storage, let launched) = state.withLock({ $0.beginShutdown() }) else {
            return await state.waitIgnoringCancellation(for: \.shutdown)
        }
        // A launch that already ended ignores the cancel.
        storage?.cancel()
        let succeeded: [String]
        let clock: ClockSource
        if launched {
            let launchReport = await launchReportIgnoringCancellation()
            succeeded = launchReport.tasks.filter(\.outcome.isSuccess).sorted { $0.endedAt < $1.endedAt }.map(\.id)
            clock = state.withLock({ $0.launched })?.clock ?? makeLaunchClock()
        } else {
            succeeded = []
            clock = makeLaunchClock()
        }
        let (prerequisites, tasks) = state.withLock { ($0.plan.prerequisites, $0.plan.compiledByName) }
        let undoable = succeeded.filter { tasks[$0] != nil }
        let report = await undo(
            ShutdownOrder(succeeded: undoable, prerequisites: prerequisites), tasks: tasks, clock: clock)
        ShutdownMetrics(telemetry)?.record(report)
        let waiters = state.withLock { $0.finishShutdown(report) }
        for waiter in waiters { waiter.resume(returning: ()) }
        return report
    }

    /// As a task of an outer launcher: shuts this launcher down (see ``shutdown()``) and
    /// throws ``LaunchError/Code/undoFailed`` naming every undo that failed or timed out. Undos
    /// cut short by a cancelled shutdown are no failure, as in ``ShutdownReport/isSuccess``.
    public func undo() async throws {
        let report = await shutdown()
        let failures = report.failures
        if !failures.isEmpty { throw LaunchError.undoFailed(failures, launcher: name) }
    }

    /// The launch's report, waiting for it to end even if the calling task is cancelled: the
    /// shutdown must know what succeeded.
    private func launchReportIgnoringCancellation() async -> LaunchReport {
        await Task(executorPreference: TaskPlacement.executor) { await self.reportIgnoringCancellation() }.value
    }

    private func undo(
        _ order: consuming ShutdownOrder, tasks: [String: any StartupTask], clock: ClockSource
    ) async -> ShutdownReport {
        var order = order
        let startedAt = clock.now
        var records: [UndoRecord] = []
        await withTaskGroup(of: UndoRecord.self) { group in
            var action = order.start()
            while true {
                switch action {
                case .finished: return
                case .wait: break
                case .undo(let names):
                    for name in names {
                        guard let task = tasks[name] else { continue }
                        group.addTask { await self.undo(task, named: name, clock: clock) }
                    }
                }
                guard let record = await group.next() else { return }
                records.append(record)
                action = order.undone(record.task)
            }
        }
        return ShutdownReport(undos: records, startedAt: startedAt, endedAt: records.isEmpty ? startedAt : clock.now)
    }

    /// Runs one task's undo against its deadline and the shutdown's cancellation.
    private func undo(_ task: any StartupTask, named name: String, clock: ClockSource) async -> UndoRecord {
        let timeout = undoTimeout
        let startedAt = clock.now
        if Task.isCancelled {
            // Reached after the cancel: not called, since an undo abandoned before it may still
            // be running, and this one must not begin before its dependents have ended.
            return UndoRecord(task: name, outcome: .cancelled, startedAt: startedAt, endedAt: startedAt)
        }
        let outcome = await undoTimer.race(
            {
                do {
                    try await task.undo()
                    return UndoOutcome.undone
                } catch {
                    return .failed(error)
                }
            },
            until: undoTimer.clock.now + timeout,
            onDeadline: { .timedOut(after: timeout) },
            onCancel: { .cancelled }
        )
        return UndoRecord(task: name, outcome: outcome, startedAt: startedAt, endedAt: clock.now)
    }
}
