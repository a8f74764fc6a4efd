internal import ConductorCore
internal import Foundation

extension JobQueue {
    /// Cancels job `id`; returns whether this ended it or cancelled its handler. A pending job ends
    /// cancelled at once (and the jobs that run after it, with
    /// ``JobQueueError/Code/dependencyFailed``); a running one has its handler cancelled (it sees
    /// `Task.isCancelled`) and ends cancelled — or succeeded, if the handler returns normally all
    /// the same: its work is done, and the file says so. `false` for a job that had already
    /// ended. Throws ``JobQueueError/Code/unknownJob`` for an id the file does not have.
    ///
    /// ```swift
    /// if try await queue.cancel(uploadID) { showCancelled() }
    /// ```
    @discardableResult
    public func cancel(_ id: JobID) async throws(JobQueueError) -> Bool {
        let now = configuration.now()
        let (endedHere, waiters, action) = try await store.write(
            { db in
                guard try JobStore.record(id, in: db) != nil else { throw JobQueueError.unknownJob(id) }
                return try JobStore.cancelPending(id, now: now, in: db)
            },
            then: { ended in
                self.state.withLock { state in
                    ended.isEmpty ? (false, [], state.requestCancel(id)) : (true, state.ended(ended), .notRunning)
                }
            })
        for waiter in waiters { waiter.resume(returning: ()) }
        if endedHere { return true }
        switch action {
        case .notRunning: return false
        case .flagged: return true
        case .remove(let taskID, let run):
            guard let removal = try? run.remove(taskID) else { return false }
            return removal != .alreadyEnded
        }
    }

    /// Cancels every pending or running job tagged `tag`, as ``cancel(_:)`` does; returns how
    /// many it ended.
    ///
    /// ```swift
    /// let cancelled = try await queue.cancel(tag: "uploads")
    /// ```
    @discardableResult
    public func cancel(tag: String) async throws(JobQueueError) -> Int {
        let active = try store.read { db in try JobStore.activeJobs(tagged: tag, in: db) }
        var count = 0
        for (id, _) in active where try await cancel(id) { count += 1 }
        return count
    }

    /// Waits until job `id` has ended and returns its record. Throws `CancellationError` when
    /// the waiting task is cancelled (the job goes on), ``JobQueueError/Code/unknownJob`` for an
    /// id the file does not have, and ``JobQueueError/Code/shutDown`` once the queue is shut
    /// down with the job not ended.
    ///
    /// ```swift
    /// let record = try await queue.ended(id)
    /// if record.state == .failed { print(record.lastError?.message ?? "") }
    /// ```
    public func ended(_ id: JobID) async throws -> JobRecord {
        while true {
            try Task.checkCancellation()
            let (generation, shutDown) = state.withLock { ($0.endGeneration, $0.isShutDown) }
            guard let record = try job(id) else { throw JobQueueError.unknownJob(id) }
            if record.state.isEnded { return record }
            if shutDown { throw JobQueueError.shutDown("wait for job \(id) to end") }
            await state.suspend(
                { state, waiter in state.endWaiterWaits(waiter, since: generation) },
                cancelledNow: { _ in ((), ()) },
                cancelled: { state, id in
                    guard let waiter = state.endWaiters.remove(id) else { return nil }
                    return { waiter.resume(returning: ()) }
                })
        }
    }

    /// Waits until the queue is idle: no job runs and none can be claimed now. Pending jobs that
    /// are not due yet, held back by a constraint that does not hold, waiting on a job they run
    /// after, or of a kind no handler is registered for do not count. How a short window of work
    /// is spent (`run(in:)` does this in an Apple background task), or a test knows all due ran:
    ///
    /// ```swift
    /// try await queue.start()
    /// try await queue.whenIdle()   // every job due now has ended, or waits for something else
    /// await queue.shutdown()
    /// ```
    ///
    /// Throws `CancellationError` when the waiting task is cancelled (the queue goes on),
    /// ``JobQueueError/Code/notStarted`` before ``start()`` has returned, and
    /// ``JobQueueError/Code/shutDown`` once the queue is shut down.
    public func whenIdle() async throws {
        let wake = await state.suspend(
            { state, waiter in state.idleWaiterWaits(waiter) },
            cancelledNow: { _ in (.cancelled, ()) },
            cancelled: { state, id in
                guard let waiter = state.idleWaiters.remove(id) else { return nil }
                return { waiter.resume(returning: .cancelled) }
            })
        switch wake {
        case .idle: return
        case .cancelled: throw CancellationError()
        case .notStarted: throw JobQueueError.notStarted("wait for the job queue to be idle")
        case .shutDown: throw JobQueueError.shutDown("wait for the job queue to be idle")
        }
    }

    /// Stops the queue: nothing is claimed or starts after this returns, and the handlers that
    /// run are cancelled. Their jobs stay `running` in the file and run again at the next start
    /// (with the next delivery number and the same key), as after a kill. Calling it twice, or
    /// before ``start()``, does no harm.
    public func shutdown() async {
        let (runs, dispatcher, waiters, idleWaiters) = state.withLock { state in
            let runs = Array(state.retiringRuns.values) + (state.run.map { [$0] } ?? [])
            state.retiringRuns = [:]
            let dispatcher = state.dispatcher
            state.phase = .shutDown
            state.dispatcher = nil
            state.isIdle = false
            return (runs, dispatcher, state.jobsEnded(), state.idleWaiters.removeAll())
        }
        for waiter in waiters { waiter.resume(returning: ()) }
        for waiter in idleWaiters { waiter.resume(returning: .shutDown) }
        dispatcher?.cancel()
        for run in runs { run.cancel() }
        await dispatcher?.value
        state.withLock { $0.running.removeAll() }
    }
}
