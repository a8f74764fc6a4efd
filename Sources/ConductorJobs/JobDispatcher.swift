internal import ConductorCore
internal import Foundation
internal import Logging

/// A ``JobQueue``'s dispatcher: claims due jobs up to the free places, adds one graph task per
/// job, and sleeps until the next due time or a wake-up (an enqueue, a job's end, a constraint
/// change, shutdown). The jobs' watchers are its child tasks, so shutdown ends them too.
struct JobDispatcher: Sendable {
    let queue: JobQueue

    func run() async {
        let clock = ClockSource(queue.configuration.clock)
        var lastRemoval: Date?
        await withDiscardingTaskGroup { group in
            while !Task.isCancelled {
                var due: Date?
                var lookedCleanly = true
                guard let run = currentRun(retiringInto: &group) else { return }
                await removeOldJobs(lastRemoval: &lastRemoval)
                do {
                    for job in try await claim() {
                        guard let watcher = launch(job, in: run) else { continue }
                        group.addTask { await watcher() }
                    }
                    due = try nextDueTime()
                } catch {
                    // A storage fault (a lock held too long, a full disk): look again in a
                    // second, or as soon as something wakes the dispatcher.
                    queue.configuration.logger.error(
                        "could not claim jobs: \(error)", metadata: ["file": "\(queue.path)"])
                    due = queue.configuration.now() + 1
                    lookedCleanly = false
                }
                await waitForWake(until: due, lookedCleanly: lookedCleanly, clock: clock)
            }
        }
    }

    /// Deletes the jobs ended longer than ``JobQueueConfiguration/endedJobRetention`` ago, on the
    /// first pass and then at most once an hour; a fault is logged, and tried again an hour on.
    private func removeOldJobs(lastRemoval: inout Date?) async {
        guard let retention = queue.configuration.endedJobRetention else { return }
        let now = queue.configuration.now()
        if let lastRemoval, abs(now.timeIntervalSince(lastRemoval)) < 3600 { return }
        lastRemoval = now
        do {
            try await queue.removeEnded(before: now - retention.seconds)
        } catch {
            queue.configuration.logger.error(
                "could not remove old ended jobs: \(error)", metadata: ["file": "\(queue.path)"])
        }
    }

    /// The run this pass's jobs go to (`nil` once shut down). Once the current run has taken
    /// ``JobQueueConfiguration/jobsPerGraphRun`` deliveries, a fresh run replaces it and the full
    /// one is closed: it ends when its jobs have, and a child task forgets it then.
    private func currentRun(retiringInto group: inout DiscardingTaskGroup) -> GraphRun? {
        let (current, isFull) = queue.state.withLock { ($0.run, $0.runJobs >= queue.configuration.jobsPerGraphRun) }
        guard isFull, let current else { return current }
        // The options were validated when the first run started.
        guard let fresh = try? queue.startRun() else { return current }
        guard let full = queue.state.withLock({ $0.replaceRun(with: fresh) }) else {
            fresh.cancel()
            return nil
        }
        full.close()
        group.addTask {
            _ = try? await full.report()
            queue.state.withLock { $0.retired(full) }
        }
        return fresh
    }

    /// One claim pass: the constraints are evaluated first, outside any lock.
    private func claim() async throws(JobQueueError) -> [ClaimedJob] {
        let (capacity, kinds, constraints) = queue.state.withLock { state in
            state.wakePending = false
            state.isIdle = false
            return (
                queue.configuration.concurrencyLimit - state.running.count, Set(state.kinds.keys),
                Array(state.constraints.values)
            )
        }
        let satisfied = Set(constraints.filter { $0.isSatisfied() }.map(\.name))
        let now = queue.configuration.now()
        let claim = try await queue.store.write(
            { db in try JobStore.claim(limit: capacity, kinds: kinds, satisfied: satisfied, now: now, in: db) },
            then: { claim in
                queue.state.withLock { state in
                    state.claimed(claim.claimed)
                    return claim
                }
            })
        if !claim.ended.isEmpty {
            for waiter in queue.state.withLock({ $0.jobsEnded() }) { waiter.resume(returning: ()) }
        }
        return claim.claimed
    }

    private func nextDueTime() throws(JobQueueError) -> Date? {
        let kinds = Set(queue.state.withLock { $0.kinds.keys })
        let now = queue.configuration.now()
        return try queue.store.read { db in try JobStore.nextDueTime(kinds: kinds, now: now, in: db) }
    }

    /// Sleeps until `due` (wall time, measured as a duration on the clock) or a wake-up,
    /// whichever comes first; returns at once when cancelled. Waiting with nothing running
    /// after a clean look lets ``whenIdle()`` return.
    private func waitForWake(until due: Date?, lookedCleanly: Bool, clock: ClockSource) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await queue.state.suspend(
                    { state, waiter in state.dispatcherWaits(waiter, lookedCleanly: lookedCleanly) },
                    cancelledNow: { _ in ((), []) },
                    perform: { idle in for waiter in idle { waiter.resume(returning: .idle) } },
                    cancelled: { state, id in
                        guard let waiter = state.dispatcherWaiter, waiter.id == id else { return nil }
                        // The due time came: the dispatcher looks again, so the queue is not idle.
                        state.dispatcherWaiter = nil
                        state.isIdle = false
                        return { waiter.resume(returning: ()) }
                    })
            }
            if let due {
                let delay = Duration.seconds(max(0, due.timeIntervalSince(queue.configuration.now())))
                group.addTask { try? await clock.sleep(for: delay) }
            }
            await group.next()
            group.cancelAll()
        }
    }

    /// Adds a claimed job's task to the run; returns its watcher, or `nil` when the job ended
    /// (or left) here instead: its payload does not decode, its kind is gone, or a cancel came first.
    private func launch(_ job: ClaimedJob, in run: GraphRun) -> (@Sendable () async -> Void)? {
        let prepared = queue.state.withLock { $0.kinds[job.kind] }.map { kind in
            Result { try kind.prepare(job.payload) }
        }
        switch prepared {
        case nil:
            return {
                await self.record(job, .failed, .ended(.unknownKind, job: job.id, kind: job.kind, "has no handler"))
            }
        case .failure(let error)?:
            let undecodable = JobQueueError.ended(
                .payloadUndecodable, job: job.id, kind: job.kind, "has a payload that does not decode: \(error)",
                underlying: error)
            return { await self.record(job, .failed, undecodable) }
        case .success(let body)?:
            guard queue.state.withLock({ $0.markAdded(job.id, to: run) }) else {
                return {
                    await self.record(job, .cancelled, .ended(.cancelled, job: job.id, kind: job.kind, "was cancelled"))
                }
            }
            let options = TaskOptions(
                priority: job.priority, timeout: job.timeout, retry: job.deliveryRetry, failure: .optional)
            let taskID = "\(job.kind)-\(job.id)#\(job.delivery)"
            do {
                let handle = try run.add(taskID, options: options) { context in
                    try await self.attempt(job, graphAttempt: context.attempt, body)
                }
                return { await self.watch(job, handle, in: run) }
            } catch {
                // The run has stopped: shutdown. The job stays running in the file.
                return nil
            }
        }
    }

    /// One attempt of a job's handler, in its graph task.
    private func attempt(
        _ job: ClaimedJob, graphAttempt: Int, _ body: @Sendable (JobContext) async throws -> Void
    ) async throws {
        let attempt = job.attemptsBefore + graphAttempt
        let (shutDown, hook) = queue.state.withLock { state in
            state.running[job.id]?.attempt = attempt
            return (state.isShutDown, state.crashHook)
        }
        // Nothing starts after shutdown, even a body the run had already handed out.
        if shutDown { throw CancellationError() }
        if graphAttempt > 1 {
            _ = try? await queue.store.write { db in
                try JobStore.recordAttempt(job.id, delivery: job.delivery, attempt: attempt, in: db)
            }
        }
        // Again after the write, which may have waited: a shutdown in the meantime wins.
        if graphAttempt > 1, Task.isCancelled || queue.state.withLock({ $0.isShutDown }) {
            throw CancellationError()
        }
        hook?(.insideHandler, job.id)
        try await body(
            JobContext(
                id: job.id, kind: job.kind, idempotencyKey: job.idempotencyKey, attempt: attempt,
                delivery: job.delivery))
        queue.state.withLock { $0.running[job.id]?.handlerReturned = true }
        hook?(.afterHandler, job.id)
    }

    /// Waits for a job's task to end and records how.
    private func watch(_ job: ClaimedJob, _ handle: TaskHandle<Void>, in run: GraphRun) async {
        let outcome: (JobState, JobQueueError?)
        do {
            try await run.value(of: handle)
            outcome = (.succeeded, nil)
        } catch  where queue.state.withLock({ $0.running[job.id]?.handlerReturned == true }) {
            // A cancel or timeout came after the handler had done its work: the file says what it did.
            outcome = (.succeeded, nil)
        } catch {
            let attempt = queue.state.withLock { $0.running[job.id]?.attempt } ?? job.attemptsBefore + 1
            switch error.code {
            case .timedOut:
                outcome = (
                    .failed,
                    .ended(.timedOut, job: job.id, kind: job.kind, "timed out on attempt \(attempt)", underlying: error)
                )
            case .cancelled:
                // Shutdown stopped it (or this watcher): it stays running in the file.
                if Task.isCancelled || queue.state.withLock({ $0.isShutDown }) { return }
                outcome = (.cancelled, .ended(.cancelled, job: job.id, kind: job.kind, "was cancelled"))
            default:
                let cause = error.underlyingError ?? error
                outcome = (
                    .failed,
                    .ended(
                        .handlerFailed, job: job.id, kind: job.kind, "failed on attempt \(attempt): \(cause)",
                        underlying: cause)
                )
            }
        }
        queue.state.withLock { $0.crashHook }?(.beforeCommit, job.id)
        await record(job, outcome.0, outcome.1)
    }

    /// Commits a job's end, retrying while the file refuses it (a lock held, a full disk): the
    /// job stays running until it is recorded, and runs again after a restart if it never is.
    func record(_ job: ClaimedJob, _ end: JobState, _ error: JobQueueError?) async {
        let now = queue.configuration.now()
        let clock = ClockSource(queue.configuration.clock)
        while !Task.isCancelled {
            let attempts = queue.state.withLock { $0.running[job.id]?.attempt } ?? job.attemptsBefore + 1
            do {
                let waiters = try await queue.store.write(
                    { db in
                        try JobStore.finish(
                            job.id, delivery: job.delivery, as: end, error: error, attempts: attempts, now: now, in: db)
                            ?? []
                    },
                    then: { ended in queue.state.withLock { $0.ended(ended + [job.id]) } })
                for waiter in waiters { waiter.resume(returning: ()) }
                return
            } catch {
                queue.configuration.logger.error(
                    "could not record the end of job \(job.id): \(error)", metadata: ["file": "\(queue.path)"])
                try? await clock.sleep(for: .seconds(1))
            }
        }
    }
}
