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
        var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
        var running = false
    }

    private let state = Lock(State())

    public init() {}

    /// How many jobs are waiting to run.
    public var pendingJobs: Int { state.withLock { $0.jobs.count } }

    public func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.jobs.append(unowned)
            var ready: [CheckedContinuation<Void, Never>] = []
            state.waiters.removeAll { waiter in
                guard state.jobs.count >= waiter.count else { return false }
                ready.append(waiter.continuation)
                return true
            }
            return ready
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

    /// Suspends until at least `count` jobs are waiting.
    public func jobs(atLeast count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if state.jobs.count >= count { return true }
                state.waiters.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    public func isSameExclusiveExecutionContext(other: ManualExecutor) -> Bool { self === other }
}
