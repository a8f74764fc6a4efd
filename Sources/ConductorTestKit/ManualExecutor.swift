import Conductor

/// A serial executor that runs jobs only when a test tells it to.
///
/// Bind an actor to it, call into the actor, and run the enqueued jobs one at a time to
/// explore an interleaving deterministically:
///
/// ```swift
/// actor Counter {
///     let executor: ManualExecutor
///     nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
///     var value = 0
///     init(executor: ManualExecutor) { self.executor = executor }
///     func increment() { value += 1 }
/// }
///
/// let executor = ManualExecutor()
/// let counter = Counter(executor: executor)
/// let call = Task { await counter.increment() }
/// await executor.jobs(atLeast: 1)   // the call is waiting for the executor
/// executor.runAll()                 // and now it runs, on this thread
/// await call.value
/// ```
public final class ManualExecutor: SerialExecutor, Sendable {
    private struct State {
        var jobs: [UnownedJob] = []
        var waiters = CountWaiters<Void>()
        var running = false
    }

    private let state = Lock(State())

    public init() {}

    /// How many jobs are waiting to run.
    public var pendingJobs: Int { state.withLock { $0.jobs.count } }

    public func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        let ready = state.withLock { state in
            state.jobs.append(unowned)
            return state.waiters.takeSatisfied(by: state.jobs.count)
        }
        for waiter in ready { waiter.resume() }
    }

    /// Runs the oldest waiting job on the calling thread. Returns `false` if there was none.
    @discardableResult
    public func runNext() -> Bool {
        let job: UnownedJob? = state.withLock { state in
            precondition(!state.running, "ManualExecutor: runNext() called from inside a job it is running")
            guard !state.jobs.isEmpty else { return nil }
            state.running = true
            return state.jobs.removeFirst()
        }
        guard let job else { return false }
        job.runSynchronously(on: asUnownedSerialExecutor())
        state.withLock { $0.running = false }
        return true
    }

    /// Runs jobs until none is waiting, including jobs enqueued while running. Returns how many ran.
    @discardableResult
    public func runAll() -> Int {
        var count = 0
        while runNext() { count += 1 }
        return count
    }

    /// Suspends until at least `count` jobs are waiting, or the waiting task is cancelled:
    /// a test's time limit then ends a wait for a job that never comes instead of hanging the
    /// run. Returns at once when the count is already met.
    public func jobs(atLeast count: Int) async {
        await state.wait(untilCountOf: { $0.jobs.count }, reaches: count, waiters: \.waiters)
    }

    public func isSameExclusiveExecutionContext(other: ManualExecutor) -> Bool { self === other }
}
