import DequeModule
public import Dispatch
import Foundation
import Synchronization

/// A serial executor backed by a dispatch queue, so actors and tasks can run on a named queue
/// or on the main queue — on Linux too, where `DispatchSerialQueue` is not an executor.
///
/// ```swift
/// let database = QueueExecutor(label: "database")
///
/// actor Store: Schedulable {
///     nonisolated let executor: QueueExecutor
///     init(executor: QueueExecutor) { self.executor = executor }
///     func flush() {}
/// }
/// let store = Store(executor: database)
///
/// // Legacy GCD code on the same queue may step into the actor without a hop:
/// database.queue.async { store.assumeOnExecutor { store in store.flush() } }
/// ```
///
/// It implements isolation checking, so `assumeIsolated`, `assertIsolated` and the checks of
/// ``Confined`` and ``Schedulable`` work from plain `queue.async` blocks. The check uses a
/// queue-specific key, never `Thread.isMainThread` alone: after the first `await`, Linux
/// services the main queue on a thread that is not the process's first thread.
///
/// It is also a `TaskExecutor`, so nonisolated async code (an ``Assembly`` factory, for
/// example) can be made to run on it with `withTaskExecutorPreference(_:operation:)`.
public final class QueueExecutor: SerialExecutor, TaskExecutor, Sendable, CustomStringConvertible {
    /// The main queue.
    public static let main = QueueExecutor(queue: .main, label: "main")

    /// The queue the jobs run on.
    public let queue: DispatchQueue
    /// The name used in diagnostics.
    public let label: String

    private let isMain: Bool
    // One key per executor, so two executors wrapping the same queue each recognise the queue.
    private let key: SpecificKey
    private let jobs = Lock(JobQueue())

    /// An executor on a new serial queue called `label`.
    public convenience init(label: String, qos: DispatchQoS = .default) {
        self.init(queue: DispatchQueue(label: label, qos: qos), label: label)
    }

    /// An executor on an existing queue, which must be serial (or the main queue): legacy
    /// callbacks already delivered on `queue` can then step into actors bound to it.
    public init(queue: DispatchQueue, label: String? = nil) {
        self.queue = queue
        self.label = label ?? queue.label
        self.isMain = queue === DispatchQueue.main
        self.key = SpecificKey()
        queue.setSpecific(key: key.key, value: ())
    }

    public var description: String { "QueueExecutor '\(label)'" }

    /// Whether the calling code runs on this executor's queue.
    public var isCurrent: Bool {
        if DispatchQueue.getSpecific(key: key.key) != nil { return true }
        // Code on the process's first thread outside any queue block (before `dispatchMain`,
        // or in a run loop) is on the main queue's thread; the key is only visible inside blocks.
        return isMain && Thread.isMainThread
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let action = jobs.withLock { $0.enqueue(job) }
        switch action {
        case .none: break
        case .scheduleDrain: queue.async { self.drain() }
        case .wake(let semaphore): semaphore.signal()
        }
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    public func isSameExclusiveExecutionContext(other: QueueExecutor) -> Bool {
        queue === other.queue
    }

    public func checkIsolated() {
        guard !isCurrent else { return }
        IsolationFailure.report("expected to run on \(self), but runs elsewhere")
    }

    // The OS 26 runtime asks this first; older runtimes (macOS 15, iOS 18, …) only call
    // `checkIsolated()`, which gives the same answer, so no availability check is needed.
    public func isIsolatingCurrentContext() -> Bool? {
        isCurrent
    }

    /// Runs waiting jobs, at most a batch at a time so other blocks on the queue (UI work on the
    /// main queue, legacy callbacks) are not starved; a job enqueued after the batch emptied the
    /// queue schedules the next drain.
    private func drain() {
        for _ in 0..<64 {
            guard let job = jobs.withLock({ $0.next() }) else { return }
            run(job)
        }
        queue.async { self.drain() }
    }

    private func run(_ job: UnownedJob) {
        job.runSynchronously(isolatedTo: asUnownedSerialExecutor(), taskExecutor: asUnownedTaskExecutor())
    }

    /// Blocks the calling code, which must be on this executor, and runs this executor's jobs
    /// as they arrive until `isDone` is true: the nested run loop of a synchronous wait, which
    /// keeps work that hops back to this executor running instead of deadlocking.
    ///
    /// Only ever on the main queue: it is the library's one blocking wait, and the main
    /// thread is never a cooperative-pool thread, so the work it waits for (which needs that
    /// pool) can always run. Blocking a pool thread here could starve that very work.
    ///
    /// Call ``wakeJobRunner()`` after making `isDone` true. `isDone` is called under the
    /// executor's lock and must be quick.
    package func runJobs(until isDone: () -> Bool) {
        precondition(
            self === QueueExecutor.main && isCurrent, "runJobs(until:) blocks; it may only run on the main queue")
        let semaphore = DispatchSemaphore(value: 0)
        while true {
            let step = jobs.withLock { $0.nextOrWait(semaphore, isDone: isDone()) }
            switch step {
            case .run(let job): run(job)
            case .wait: semaphore.wait()
            case .done: return
            }
        }
    }

    /// Wakes a ``runJobs(until:)`` that is waiting, so it checks its condition again.
    package func wakeJobRunner() {
        jobs.withLock { $0.takeWaitingRunner() }?.signal()
    }
}

extension QueueExecutor {
    /// The jobs of one executor. Every job goes through this queue (not straight into the
    /// dispatch queue), so a synchronous wait on the executor can run jobs enqueued before it
    /// started, which would otherwise be stuck behind it in the dispatch queue.
    fileprivate struct JobQueue: ~Copyable {
        enum EnqueueAction {
            case none
            case scheduleDrain
            case wake(DispatchSemaphore)
        }

        enum Step {
            case run(UnownedJob)
            case wait
            case done
        }

        private var jobs: Deque<UnownedJob> = []
        private var drainScheduled = false
        private var waitingRunner: DispatchSemaphore?

        mutating func enqueue(_ job: UnownedJob) -> EnqueueAction {
            jobs.append(job)
            if let runner = takeWaitingRunner() { return .wake(runner) }
            if drainScheduled { return .none }
            drainScheduled = true
            return .scheduleDrain
        }

        mutating func next() -> UnownedJob? {
            if let job = jobs.popFirst() { return job }
            drainScheduled = false
            return nil
        }

        mutating func nextOrWait(_ semaphore: DispatchSemaphore, isDone: Bool) -> Step {
            if let job = jobs.popFirst() { return .run(job) }
            if isDone { return .done }
            waitingRunner = semaphore
            return .wait
        }

        mutating func takeWaitingRunner() -> DispatchSemaphore? {
            defer { waitingRunner = nil }
            return waitingRunner
        }
    }

    /// A dispatch-specific key; it is only ever read and written by Dispatch, which is thread-safe.
    fileprivate struct SpecificKey: @unchecked Sendable {
        let key = DispatchSpecificKey<Void>()
    }
}
