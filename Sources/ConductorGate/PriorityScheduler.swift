import Synchronization

/// Runs async work in priority lanes, with an optional concurrency limit, aging, an
/// exclusive `unique` barrier and coalescing of identical work.
///
/// ```swift
/// let scheduler = try PriorityScheduler(maxConcurrent: 4)
/// let feed = try await scheduler.run(priority: .high) { try await api.feed() }
/// // A token refresh: waits for running work, then runs alone; everything submitted
/// // meanwhile waits for it.
/// let token = try await scheduler.run(priority: .unique) { try await api.refreshToken() }
/// // Fifty callers, one download:
/// let avatar = try await scheduler.run(coalescingKey: url) { try await download(url) }
/// ```
///
/// Higher priorities start first and work of one priority starts in submission order.
/// Aging bounds the wait: work queued after a waiting job starts ahead of it at most
/// `agingThreshold` times, whatever the arrival pattern (not counting `unique` jobs, which
/// overtake everything, nor a coalesced flight a joining caller raised), so `low` work cannot
/// starve. `run` executes the work in the caller's task once a slot is free —
/// no task is spawned; ``submit(priority:_:)`` queues fire-and-forget work that the
/// scheduler's own workers drain, one task per busy slot rather than one per job.
///
/// Cancelling a caller whose work is still queued removes it at once (it throws
/// `CancellationError`); ``shutdown()`` ends every queued submission once with
/// ``SchedulerError/Code/shutDown``, and later submissions throw the same.
///
/// - Complexity: submitting, starting and cancelling are O(1) amortized, under one lock.
public final class PriorityScheduler: Sendable {
    /// How a caller waiting for a slot goes on.
    enum Grant: Sendable {
        case started
        case cancelled
        case shutDown
    }

    enum Payload: Sendable {
        /// A caller of `run`, waiting for its slot.
        case waiter(WaiterSet<Grant>.Waiter)
        /// A submitted job, run by a worker.
        case job(Job)
    }

    struct Job: Sendable {
        var priority: RequestPriority
        var body: @Sendable () async -> Void
    }

    struct State {
        var machine: SchedulerStateMachine<Payload>
        /// The coalesced flights (PriorityScheduler+Coalescing.swift), under this one lock with
        /// the slots, so a joining caller raises a flight's queued slot in the same transition.
        var flights = Flights()
        /// Test hook's waiters for the coalesced callers' count: empty until a test waits.
        var callerWaiters = CountWaiters<Void>()
        /// `whenIdle` callers: resumed with `true` once idle, `false` when cancelled.
        var idleWaiters = WaiterSet<Bool>()
        /// Test hooks' waiters (PriorityScheduler+Testing.swift), keyed by the lane they count
        /// (`nil`: all lanes); empty until a test waits.
        var probeWaiters = CountWaiters<RequestPriority?>()

        /// The test hooks' waiters whose count the queue now meets, to resume after unlocking.
        mutating func takeSatisfiedProbeWaiters() -> [CountWaiters<Void>.Continuation] {
            // Checked first so that a scheduler no test waits on does not copy its machine.
            guard !probeWaiters.isEmpty else { return [] }
            return probeWaiters.takeSatisfied { [machine] in machine.queuedCount(inLane: $0) }
        }

        mutating func takeIdleWaitersIfIdle() -> [WaiterSet<Bool>.Waiter] {
            guard !idleWaiters.isEmpty, machine.isIdle else { return [] }
            return idleWaiters.removeAll()
        }

        /// Moves queued entry `id` to `priority`'s lane; returns the test hooks' waiters to wake.
        mutating func raise(id: UInt64, to priority: RequestPriority) -> [CountWaiters<Void>.Continuation] {
            guard machine.raise(id: id, to: priority) else { return [] }
            return takeSatisfiedProbeWaiters()
        }
    }

    let state: Lock<State>

    /// Creates a scheduler, or throws ``SchedulerError/Code/invalidConfiguration`` naming a
    /// count below 1.
    ///
    /// - Parameters:
    ///   - maxConcurrent: how many non-unique jobs may run at once; `nil` for no limit.
    ///     A `unique` job never counts against it. At least 1: a limit of zero would start
    ///     nothing, ever.
    ///   - agingThreshold: the aging bound: at most this many jobs queued after a waiting job
    ///     start before it, whatever their priority. At least 1.
    public convenience init(maxConcurrent: Int? = nil, agingThreshold: Int = 64) throws(SchedulerError) {
        if let maxConcurrent, maxConcurrent < 1 { throw .invalidConfiguration("maxConcurrent", maxConcurrent) }
        if agingThreshold < 1 { throw .invalidConfiguration("agingThreshold", agingThreshold) }
        self.init(validatedMaxConcurrent: maxConcurrent, agingThreshold: agingThreshold)
    }

    /// A scheduler whose counts were checked already (a gate's, by its configuration).
    init(validatedMaxConcurrent maxConcurrent: Int?, agingThreshold: Int) {
        let machine = SchedulerStateMachine<Payload>(limit: maxConcurrent, agingThreshold: agingThreshold)
        state = Lock(State(machine: machine))
    }

    /// Runs `work` in the calling task once its priority's turn comes, and returns its result.
    ///
    /// Throws `CancellationError` at once if the caller is cancelled while waiting, and
    /// ``SchedulerError/Code/shutDown`` if the scheduler is (or gets) shut down before the work starts.
    public func run<T>(
        priority: RequestPriority = .default,
        isolation: isolated (any Actor)? = #isolation,
        _ work: () async throws -> T
    ) async throws -> T {
        try await acquire(priority)
        defer { release(priority) }
        return try await work()
    }

    /// Runs `work` once for every caller that passes an equal `coalescingKey` while it is in
    /// flight; they all get its result.
    ///
    /// The work runs in a task of its own: a cancelled caller returns `CancellationError` at
    /// once and the others go on waiting; when every caller has left, the work is cancelled.
    /// While the work is still queued, a caller who joins with a higher priority raises it to
    /// that priority (at most `high`).
    public func run<T: Sendable>(
        priority: RequestPriority = .default,
        coalescingKey: some Hashable & Sendable,
        _ work: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let result = try await coalesce(ErasedCoalescingKey(coalescingKey, result: T.self), priority: priority) {
            try await work()
        }
        // The key names the result's type: a flight of an equal key always produced a `T`.
        guard let value = result as? T else { preconditionFailure("a coalesced flight produced another type") }
        return value
    }

    /// Queues `work` to run on the scheduler's workers; returns without waiting.
    ///
    /// Use it for many small jobs: a worker that finishes a job takes the next one itself.
    /// Work still queued at ``shutdown()`` never runs. Throws ``SchedulerError/Code/shutDown`` after a
    /// shutdown.
    public func submit(priority: RequestPriority = .default, _ work: @escaping @Sendable () async -> Void)
        throws(SchedulerError)
    {
        let job = Job(priority: priority, body: work)
        let (action, queueWaiters) = state.withLock { state in
            (
                state.machine.submit(id: WaiterID.next(), priority: priority, payload: .job(job)),
                state.takeSatisfiedProbeWaiters()
            )
        }
        for waiter in queueWaiters { waiter.resume() }
        switch action {
        case .start: spawnWorker(job)
        case .enqueued: break
        case .rejected: throw SchedulerError.shutDown()
        }
    }

    /// Waits until nothing runs and nothing is queued.
    ///
    /// - Throws: `CancellationError`, at once, when the waiting task is cancelled; the
    ///   scheduler is unaffected.
    public func whenIdle() async throws(CancellationError) {
        let idle = await state.suspend(
            { (state: inout State, waiter: WaiterSet<Bool>.Waiter) -> SuspensionDecision<Bool, Bool> in
                if state.machine.isIdle { return .resume(true, true) }
                state.idleWaiters.insert(waiter)
                return .wait(false)
            },
            cancelledNow: { (_: inout State) -> (Bool, Bool) in (false, false) },
            cancelled: { @Sendable (state: inout State, id: UInt64) -> (@Sendable () -> Void)? in
                guard let waiter = state.idleWaiters.remove(id) else { return nil }
                return { waiter.resume(returning: false) }
            })
        if !idle { throw CancellationError() }
    }

    /// Refuses further work and ends every queued submission once: waiting callers of
    /// `run` throw ``SchedulerError/Code/shutDown``; queued jobs are dropped. Running work finishes.
    public func shutdown() {
        let (dropped, idle) = state.withLock { state in
            (state.machine.shutdown(), state.takeIdleWaitersIfIdle())
        }
        for payload in dropped {
            if case .waiter(let waiter) = payload { waiter.resume(returning: .shutDown) }
        }
        for waiter in idle { waiter.resume(returning: true) }
    }

    // MARK: - Slots

    /// Waits for a slot. With a `flight` (its key and id), the flight's priority is read, and
    /// its queued entry recorded, in the transition that queues it, so a joining caller can
    /// raise it. Returns `priority`, for the matching `release`: a flight's priority is
    /// `unique` exactly when it opened so (joining callers raise it at most to `high`).
    @discardableResult
    func acquire(_ priority: RequestPriority, flight: (key: ErasedCoalescingKey, id: UInt64)? = nil) async throws
        -> RequestPriority
    {
        func current(_ state: State) -> RequestPriority {
            guard let flight, let live = state.flights.flight(flight.key, of: flight.id) else { return priority }
            return live.priority
        }
        switch state.withLock({ $0.machine.startImmediately(current($0)) }) {
        case true: return priority
        case nil: throw SchedulerError.shutDown()
        case false: break
        }
        // The test hooks' waiters to wake.
        typealias Ready = [CountWaiters<Void>.Continuation]
        let grant = await state.suspend { state, waiter -> SuspensionDecision<Grant, Ready> in
            let action = state.machine.submit(id: waiter.id, priority: current(state), payload: .waiter(waiter))
            if case .enqueued = action, let flight {
                state.flights.queued(flight.key, request: flight.id, slot: waiter.id)
            }
            let ready = state.takeSatisfiedProbeWaiters()
            switch action {
            case .start: return .resume(.started, ready)
            case .enqueued: return .wait(ready)
            case .rejected: return .resume(.shutDown, ready)
            }
        } cancelledNow: { _ in
            (.cancelled, [])
        } perform: { ready in
            for waiter in ready { waiter.resume() }
        } cancelled: { state, id in
            guard let removed = state.machine.cancel(id: id) else { return nil }
            return { [self] in
                if case .waiter(let waiter) = removed.cancelled { waiter.resume(returning: .cancelled) }
                start(removed.started)
            }
        }
        switch grant {
        case .started: return priority
        case .cancelled: throw CancellationError()
        case .shutDown: throw SchedulerError.shutDown()
        }
    }

    func release(_ priority: RequestPriority) {
        let (started, idle) = state.withLock { state in
            (state.machine.finish(unique: priority == .unique), state.takeIdleWaitersIfIdle())
        }
        start(started)
        for waiter in idle { waiter.resume(returning: true) }
    }

    private func start(_ payloads: [Payload]) {
        for payload in payloads {
            switch payload {
            case .waiter(let waiter): waiter.resume(returning: .started)
            case .job(let job): spawnWorker(job)
            }
        }
    }

    // MARK: - Workers

    private func spawnWorker(_ job: Job) {
        Task(executorPreference: TaskPlacement.executor) { await self.drain(startingWith: job) }
    }

    /// Runs `job`, then keeps taking the jobs its slot releases, so a busy scheduler reuses
    /// its workers instead of spawning a task per job.
    private func drain(startingWith first: Job) async {
        var job = first
        while true {
            await job.body()
            let (started, idle) = state.withLock { state in
                (state.machine.finish(unique: job.priority == .unique), state.takeIdleWaitersIfIdle())
            }
            var next: Job?
            for payload in started {
                switch payload {
                case .waiter(let waiter): waiter.resume(returning: .started)
                case .job(let queued):
                    if next == nil { next = queued } else { spawnWorker(queued) }
                }
            }
            for waiter in idle { waiter.resume(returning: true) }
            guard let next else { return }
            job = next
        }
    }

    /// How many entries wait for a slot now: the gate's queue-depth gauge.
    var queuedCount: Int { state.withLock { $0.machine.queuedCount } }
}
