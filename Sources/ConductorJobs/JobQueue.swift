internal import ConductorCore
public import Foundation
internal import GRDB
internal import Logging

/// A durable job queue: jobs are rows of a SQLite file, committed before ``enqueue(_:_:options:)``
/// returns, and run by registered handlers as tasks of a long-lived graph run. A job found
/// running at start-up — its process died — runs again, with the same idempotency key.
///
/// ```swift
/// // PlaceOrder: a JobKind whose payload is an order (see JobKind).
/// let queue = try JobQueue(path: jobsURL.path)
/// queue.register(PlaceOrder.self) { order, context in
///     try await shop.place(order, idempotencyKey: context.idempotencyKey)
/// }
/// let recovery = try await queue.start()
/// let id = try await queue.enqueue(PlaceOrder.self, .init(orderID: "42", cents: 999))
/// let record = try await queue.ended(id)   // .succeeded, or why not
/// await queue.shutdown()
/// ```
///
/// **Exactly once in effect.** A handler runs at least once per job: again after a failed
/// attempt (its ``JobOptions/retry``), and again after the process died (or the queue was shut
/// down) between the handler's start and the commit of its end. Every run of a job sees the same
/// ``JobContext/idempotencyKey``; a server that de-duplicates by it (an `Idempotency-Key`
/// header) applies the effect once. That de-duplication is part of the contract.
///
/// **Shutting down.** ``shutdown()`` stops claiming and cancels the handlers that run; their
/// jobs stay `running` in the file and run again at the next start, as after a kill. The
/// dispatcher holds the queue until then: shut down what you start.
///
/// **The graph run.** Each delivery of a job is one task (id `"<kind>-<job id>#<delivery>"`) of
/// a graph run that stays open from ``start()`` to ``shutdown()``, with the job's priority, retry
/// policy and timeout as its ``TaskOptions``: ``graphRun`` gives its events, spans, metrics and
/// report. A run keeps a record of every task it ran, so once it has taken
/// ``JobQueueConfiguration/jobsPerGraphRun`` deliveries the queue starts a fresh one and closes
/// the full one: a long-lived queue's memory stays bounded, and ``graphRun`` changes.
public final class JobQueue: Sendable {
    /// The file.
    public let path: String
    let configuration: JobQueueConfiguration
    let store: JobStore
    let state = Lock(JobQueueState())

    /// Opens (or creates) the queue's file and brings its schema up to date. Nothing runs
    /// before ``start()``.
    ///
    /// Throws a ``JobQueueError`` naming the file: ``JobQueueError/Code/cannotOpen``,
    /// ``JobQueueError/Code/databaseLocked``, ``JobQueueError/Code/readOnly``,
    /// ``JobQueueError/Code/corrupt`` or ``JobQueueError/Code/diskFull``.
    public convenience init(
        path: String, configuration: JobQueueConfiguration = JobQueueConfiguration()
    ) throws(JobQueueError) {
        try self.init(path: path, configuration: configuration, readOnly: false)
    }

    /// `readOnly`: opens the file as SQLite opens a file it cannot write (see `JobQueue+Testing`).
    init(path: String, configuration: JobQueueConfiguration, readOnly: Bool) throws(JobQueueError) {
        self.path = path
        self.configuration = configuration
        store = try JobStore(
            path: path, synchronous: configuration.synchronous, busyTimeout: configuration.busyTimeout,
            readOnly: readOnly)
    }

    /// Registers the handler of `kind`'s jobs. Register every kind before ``start()`` (a kind
    /// registered twice makes it throw ``JobQueueError/Code/duplicateKind``); a kind registered
    /// later is claimed from then on.
    ///
    /// ```swift
    /// queue.register(PlaceOrder.self) { order, context in
    ///     try await shop.place(order, idempotencyKey: context.idempotencyKey)
    /// }
    /// ```
    public func register<Kind: JobKind>(
        _ kind: Kind.Type,
        handler: @escaping @Sendable (Kind.Payload, JobContext) async throws -> Void
    ) {
        let registered = RegisteredKind { data in
            let payload = try JSONDecoder().decode(Kind.Payload.self, from: data)
            return { context in try await handler(payload, context) }
        }
        let wake = state.withLock { state in
            state.register(registered, named: Kind.name)
            return state.wake()
        }
        for waiter in wake { waiter.resume(returning: ()) }
    }

    /// Registers a constraint jobs can name in ``JobOptions/constraints``; a second one of the
    /// same name replaces the first.
    public func register(constraint: JobConstraint) {
        let wake = state.withLock { state in
            state.constraints[constraint.name] = constraint
            return state.wake()
        }
        for waiter in wake { waiter.resume(returning: ()) }
    }

    /// Makes the queue check its constraints again, and claim the jobs they now allow.
    public func constraintsChanged() {
        for waiter in state.withLock({ $0.wake() }) { waiter.resume(returning: ()) }
    }

    /// The graph run the next jobs run in, once started: its events, spans, metrics and report.
    /// A fresh one replaces it after ``JobQueueConfiguration/jobsPerGraphRun`` deliveries; spans
    /// and metrics go to ``JobQueueConfiguration/telemetry`` whichever run a job ran in.
    public var graphRun: GraphRun? { state.withLock { $0.run } }

    /// Starts running jobs: jobs found running (their process died) become pending again,
    /// pending jobs of unregistered kinds are counted and left alone, and the dispatcher begins
    /// claiming due jobs.
    ///
    /// Throws ``JobQueueError/Code/duplicateKind`` if a kind was registered twice,
    /// ``JobQueueError/Code/alreadyStarted`` on a second call, ``JobQueueError/Code/shutDown``
    /// after ``shutdown()``, ``JobQueueError/Code/invalidOption`` for a
    /// ``JobQueueConfiguration/concurrencyLimit`` below 1, or a storage error naming the file.
    @discardableResult
    public func start() async throws(JobQueueError) -> JobQueueRecovery {
        try state.withLock { (state) throws(JobQueueError) in
            switch state.phase {
            case .configuring: break
            case .starting, .started: throw .alreadyStarted("start")
            case .shutDown: throw .shutDown("start")
            }
            if let duplicate = state.duplicateKind { throw .duplicateKind(duplicate) }
            state.phase = .starting
        }
        do {
            return try await open()
        } catch {
            // A shutdown that came during the start stays: the queue cannot be started again.
            state.withLock { state in
                if case .starting = state.phase { state.phase = .configuring }
            }
            throw error
        }
    }

    private func open() async throws(JobQueueError) -> JobQueueRecovery {
        guard configuration.concurrencyLimit >= 1 else {
            throw JobQueueError(
                .invalidOption, "concurrencyLimit must be at least 1 (got \(configuration.concurrencyLimit))")
        }
        let kinds = Set(state.withLock { $0.kinds.keys })
        let recovery = try await store.write { db in
            JobQueueRecovery(
                requeued: try JobStore.requeueRunning(in: db),
                unknownKinds: try JobStore.unknownKinds(registered: kinds, in: db))
        }
        guard configuration.jobsPerGraphRun >= 1 else {
            throw JobQueueError(
                .invalidOption, "jobsPerGraphRun must be at least 1 (got \(configuration.jobsPerGraphRun))")
        }
        if let retention = configuration.endedJobRetention, retention < .zero {
            throw JobQueueError(.invalidOption, "endedJobRetention must not be negative (got \(retention))")
        }
        let run: GraphRun
        do {
            run = try startRun()
        } catch {
            throw JobQueueError(.invalidOption, error.message, underlying: error)
        }
        let started = state.withLock { state in
            // shutdown() may have come while the file was opened: then nothing may start.
            guard case .starting = state.phase else { return false }
            state.phase = .started(run)
            state.dispatcher = Task { await JobDispatcher(queue: self).run() }
            return true
        }
        guard started else {
            run.cancel()
            throw .shutDown("start")
        }
        for (kind, count) in recovery.unknownKinds.sorted(by: { $0.key < $1.key }) {
            configuration.logger.warning(
                "\(count) pending job(s) of unregistered kind '\(kind)' stay pending", metadata: ["file": "\(path)"])
        }
        return recovery
    }

    /// A graph run for the jobs' tasks, held open until it is full or the queue shuts down.
    func startRun() throws(GraphError) -> GraphRun {
        try TaskGraph().start(
            concurrencyLimit: configuration.concurrencyLimit, clock: configuration.clock,
            telemetry: configuration.telemetry, staysOpen: true)
    }

    /// Adds a job; returns once it is committed to the file. Works before ``start()`` too (the
    /// job waits in the file).
    ///
    /// ```swift
    /// let id = try await queue.enqueue(PlaceOrder.self, order, options: JobOptions(tags: ["orders"]))
    /// ```
    ///
    /// With ``JobOptions/unique`` and ``JobUniqueness/keepExisting(_:)``, returns the id of the
    /// not-ended job holding the name, and adds nothing. Throws ``JobQueueError/Code/invalidOption``
    /// (nothing is added), ``JobQueueError/Code/unknownJob`` for an ``JobOptions/after`` id the file
    /// does not have, ``JobQueueError/Code/uniqueJobRunning``, ``JobQueueError/Code/shutDown``, or a
    /// storage error naming the file.
    @discardableResult
    public func enqueue<Kind: JobKind>(
        _ kind: Kind.Type, _ payload: Kind.Payload, options: JobOptions = JobOptions()
    ) async throws(JobQueueError) -> JobID {
        try await insert(kind, payload, options: options, period: nil)
    }

    /// Adds a job that runs every `period`, unique by `name` (while an occurrence is pending or
    /// running, this returns its id and adds nothing). Its first occurrence is due at once (or
    /// at ``JobOptions/notBefore``); when one ends, whatever its outcome but a cancel, the next is
    /// inserted in the same transaction, due one period after the ended one was scheduled —
    /// no drift; after a downtime, missed occurrences are skipped and one runs at once.
    /// Cancelling an occurrence ends the series.
    ///
    /// ```swift
    /// try await queue.enqueuePeriodic(SyncInbox.self, .init(), every: .seconds(900), name: "inbox-sync")
    /// ```
    @discardableResult
    public func enqueuePeriodic<Kind: JobKind>(
        _ kind: Kind.Type, _ payload: Kind.Payload, every period: Duration, name: String,
        options: JobOptions = JobOptions()
    ) async throws(JobQueueError) -> JobID {
        guard period > .zero else {
            throw .invalidOption("a period of \(period), which must be positive", kind: Kind.name)
        }
        var options = options
        options.unique = .keepExisting(name)
        return try await insert(kind, payload, options: options, period: period)
    }

    private func insert<Kind: JobKind>(
        _ kind: Kind.Type, _ payload: Kind.Payload, options: JobOptions, period: Duration?
    ) async throws(JobQueueError) -> JobID {
        if state.withLock({ $0.isShutDown }) { throw .shutDown("enqueue a job of kind '\(Kind.name)'") }
        try options.validate(kind: Kind.name)
        let data: Data
        do {
            data = try JSONEncoder().encode(payload)
        } catch {
            throw .payloadUnencodable(kind: Kind.name, error)
        }
        let now = configuration.now()
        let insertion = JobInsertion(
            kind: Kind.name, payload: data, options: options, period: period,
            scheduledAt: period == nil ? nil : options.notBefore ?? now)
        let result = try await store.write { db in try JobStore.insert(insertion, now: now, in: db) }
        let wake = state.withLock { state in
            result.ended.isEmpty ? state.wake() : state.ended(result.ended)
        }
        for waiter in wake { waiter.resume(returning: ()) }
        return result.id
    }

    /// Job `id` as the file records it, or `nil` if there is none.
    public func job(_ id: JobID) throws(JobQueueError) -> JobRecord? {
        try store.read { db in try JobStore.record(id, in: db) }
    }

    /// Deletes the jobs that ended before `date` from the file; returns how many. Jobs that
    /// have not ended are never deleted, and a job that runs after a deleted one is not held
    /// back by it. ``JobQueueConfiguration/endedJobRetention`` does this as the queue runs.
    ///
    /// ```swift
    /// let removed = try await queue.removeEnded(before: Date() - 86_400)
    /// ```
    @discardableResult
    public func removeEnded(before date: Date) async throws(JobQueueError) -> Int {
        try await store.write { db in try JobStore.removeEnded(before: date, in: db) }
    }

    /// The jobs in `state` (any state if `nil`) carrying `tag` (any if `nil`), by id.
    public func jobs(in state: JobState? = nil, tag: String? = nil) throws(JobQueueError) -> [JobRecord] {
        try store.read { db in try JobStore.records(in: state, tag: tag, in: db) }
    }
}
