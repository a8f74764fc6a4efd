internal import ConductorCore
internal import Foundation

/// A registered kind, its payload type erased: decoding makes the attempt's body, so a
/// payload that no longer decodes is found before anything runs.
struct RegisteredKind: Sendable {
    let prepare: @Sendable (Data) throws -> @Sendable (JobContext) async throws -> Void
}

/// What the queue knows in memory about a job it claimed and has not yet recorded the end of.
struct RunningJob: Sendable {
    var taskID: String
    var delivery: Int
    /// The attempt last started, across deliveries.
    var attempt: Int
    /// Whether its task is in the graph run (a cancel then removes it), or still to be added
    /// (a cancel then flags it, and the dispatcher ends it instead of adding it).
    var added = false
    var cancelRequested = false
    /// Whether an attempt's handler returned normally: its work is done, whatever cancelled or
    /// abandoned its task meanwhile, so the job ends succeeded.
    var handlerReturned = false
    /// The graph run its task was added to: the current one, or one the queue is retiring.
    var run: GraphRun?
}

/// The queue's state in memory: a pure value whose operations return what to do, performed by
/// ``JobQueue`` once the lock is released.
struct JobQueueState: Sendable {
    enum Phase: Sendable {
        case configuring
        case starting
        case started(GraphRun)
        case shutDown
    }

    /// What ``requestCancel(_:)`` found.
    enum CancelAction: Sendable, Equatable {
        /// Remove the task from the run it was added to.
        case remove(taskID: String, from: GraphRun)
        /// Not yet added: the dispatcher ends it cancelled.
        case flagged
        /// Not running in this process.
        case notRunning

        static func == (lhs: CancelAction, rhs: CancelAction) -> Bool {
            switch (lhs, rhs) {
            case (.remove(let left, let leftRun), .remove(let right, let rightRun)):
                left == right && leftRun === rightRun
            case (.flagged, .flagged), (.notRunning, .notRunning): true
            default: false
            }
        }
    }

    var phase = Phase.configuring
    var kinds: [String: RegisteredKind] = [:]
    var duplicateKind: String?
    var constraints: [String: JobConstraint] = [:]
    var running: [JobID: RunningJob] = [:]
    var dispatcher: Task<Void, Never>?
    /// How many deliveries the current run took.
    var runJobs = 0
    /// Full runs, closed, whose jobs have not all ended: shutdown cancels them too.
    var retiringRuns: [ObjectIdentifier: GraphRun] = [:]
    /// Bumped whenever a job ends; ``JobQueue/ended(_:)`` waiters wait for a change.
    var endGeneration: UInt64 = 0
    var endWaiters = WaiterSet<Void>()
    /// A wake-up that came while the dispatcher was not waiting: it looks again at once.
    var wakePending = false
    var dispatcherWaiter: WaiterSet<Void>.Waiter?
    /// The dispatcher's last look found nothing to claim and nothing runs; any wake-up, and the
    /// dispatcher's next look, clear it.
    var isIdle = false
    var idleWaiters = WaiterSet<IdleWake>()
    var crashHook: (@Sendable (JobCrashPoint, JobID) -> Void)?

    var isShutDown: Bool {
        if case .shutDown = phase { return true }
        return false
    }

    var run: GraphRun? {
        if case .started(let run) = phase { return run }
        return nil
    }

    mutating func register(_ kind: RegisteredKind, named name: String) {
        if kinds[name] != nil {
            duplicateKind = duplicateKind ?? name
            return
        }
        kinds[name] = kind
    }

    /// What a ``JobQueue/whenIdle()`` waiter was resumed with.
    enum IdleWake: Sendable {
        case idle
        case cancelled
        case notStarted
        case shutDown
    }

    /// Records the jobs a claim moved to running (on the writer, right after its commit).
    mutating func claimed(_ jobs: [ClaimedJob]) {
        for job in jobs {
            running[job.id] = RunningJob(
                taskID: "\(job.kind)-\(job.id)#\(job.delivery)", delivery: job.delivery, attempt: job.attemptsBefore + 1
            )
        }
    }

    /// Whether the dispatcher may add the job's task to `run`: not if a cancel came first.
    mutating func markAdded(_ id: JobID, to run: GraphRun) -> Bool {
        guard var job = running[id], !job.cancelRequested else { return false }
        job.added = true
        job.run = run
        running[id] = job
        runJobs += 1
        return true
    }

    /// Makes `fresh` the run the next deliveries go to, if the queue has not shut down; returns
    /// the full run it replaces, which the caller closes (and this keeps until ``retired(_:)``).
    mutating func replaceRun(with fresh: GraphRun) -> GraphRun? {
        guard case .started(let full) = phase else { return nil }
        phase = .started(fresh)
        runJobs = 0
        retiringRuns[ObjectIdentifier(full)] = full
        return full
    }

    /// A closed run ended.
    mutating func retired(_ run: GraphRun) {
        retiringRuns[ObjectIdentifier(run)] = nil
    }

    mutating func requestCancel(_ id: JobID) -> CancelAction {
        guard var job = running[id] else { return .notRunning }
        job.cancelRequested = true
        running[id] = job
        guard job.added, let run = job.run else { return .flagged }
        return .remove(taskID: job.taskID, from: run)
    }

    /// A job's end was recorded (or it left this process): forget it, wake the dispatcher (a
    /// place is free) and every ``JobQueue/ended(_:)`` waiter.
    mutating func ended(_ ids: [JobID]) -> [WaiterSet<Void>.Waiter] {
        for id in ids { running[id] = nil }
        return jobsEnded()
    }

    /// Wakes every ``JobQueue/ended(_:)`` waiter and the dispatcher.
    mutating func jobsEnded() -> [WaiterSet<Void>.Waiter] {
        endGeneration &+= 1
        return endWaiters.removeAll() + wake()
    }

    /// Wakes the dispatcher, or lets its next wait return at once.
    mutating func wake() -> [WaiterSet<Void>.Waiter] {
        isIdle = false
        guard let waiter = dispatcherWaiter else {
            wakePending = true
            return []
        }
        dispatcherWaiter = nil
        return [waiter]
    }

    /// The dispatcher's wait: at once if woken since it last looked. `lookedCleanly`: its last
    /// look claimed what it could without a storage fault. If it then waits with nothing running,
    /// nothing is claimable now (anything that could change that wakes it first), so the queue
    /// is idle: the effect is the ``JobQueue/whenIdle()`` waiters to resume.
    mutating func dispatcherWaits(_ waiter: WaiterSet<Void>.Waiter, lookedCleanly: Bool)
        -> SuspensionDecision<Void, [WaiterSet<IdleWake>.Waiter]>
    {
        if wakePending || isShutDown {
            wakePending = false
            return .resume((), [])
        }
        dispatcherWaiter = waiter
        guard lookedCleanly, running.isEmpty else { return .wait([]) }
        isIdle = true
        return .wait(idleWaiters.removeAll())
    }

    /// A ``JobQueue/whenIdle()`` waiter's wait: at once if idle, not started or shut down.
    mutating func idleWaiterWaits(_ waiter: WaiterSet<IdleWake>.Waiter) -> SuspensionDecision<IdleWake, Void> {
        switch phase {
        case .configuring, .starting: return .resume(.notStarted, ())
        case .shutDown: return .resume(.shutDown, ())
        case .started: break
        }
        if isIdle { return .resume(.idle, ()) }
        idleWaiters.insert(waiter)
        return .wait(())
    }

    /// An ``JobQueue/ended(_:)`` waiter's wait: at once if a job ended since `generation`.
    mutating func endWaiterWaits(_ waiter: WaiterSet<Void>.Waiter, since generation: UInt64)
        -> SuspensionDecision<Void, Void>
    {
        if endGeneration != generation || isShutDown { return .resume((), ()) }
        endWaiters.insert(waiter)
        return .wait(())
    }
}

/// Points in a job's run where a crash test's child process kills itself (see
/// `JobQueue.setCrashHook(_:)`).
package enum JobCrashPoint: String, Sendable, CaseIterable {
    /// In the attempt's task, before the handler's code runs.
    case insideHandler
    /// The handler returned; its end is not yet recorded.
    case afterHandler
    /// The job's end is about to be committed.
    case beforeCommit
}
