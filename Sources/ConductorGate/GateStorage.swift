import HTTPTypes
import Logging
import Synchronization

/// The machinery of a ``RequestGate``: one lock over everything the gate decides — the
/// credential and its refresh (a ``GateStateMachine``), the flights of requests and the
/// callers waiting on them, the slots (a ``SchedulerStateMachine``), and the event journal —
/// and the code that carries out what each transition decided once the lock is released
/// (resuming continuations, starting or cancelling tasks, calling the transport and the user's
/// closures, telling the logger and the instruments).
///
/// Every transition takes the lock once and appends its events to the journal in the same
/// critical section, so the journal's order is the order of the transitions (a
/// `refreshStarted` is always before the `running` of every request that carries the new
/// credential) and no second lock is ever taken while this one is held. A valid request that
/// finds a slot free passes through four transitions: open its flight, take a slot and
/// authorize its attempt, give the slot back, settle the flight — see Benchmarks/README.md for
/// the count against the gate before.
///
/// Not generic: the credential is an ``ErasedCredential``, so the storage and its state
/// machines are compiled for concrete types and a request looks up no generic metadata at run
/// time (a generic storage looks it up throughout a request, a large share of its cost).
final class GateStorage: Sendable {
    /// What the gate's machine keeps for the storage to resume or cancel.
    enum Handles: GateHandles {
        typealias Credential = ErasedCredential
        typealias Parked = WaiterSet<Resumption>.Waiter
        typealias Caller = WaiterSet<Delivery>.Waiter
        typealias SlotWaiter = WaiterSet<SlotGrant>.Waiter
        typealias Work = FlightWork
    }

    typealias Machine = GateStateMachine<Handles>
    typealias Failure = GateFailure
    typealias RefreshFlight = GateRefreshFlight
    typealias Priority = PriorityScheduler.Priority
    typealias FlightKey = GateFlightKey

    /// How a request waiting on the credential goes on.
    enum Resumption: Sendable {
        /// Send now; the request still holds its slot.
        case send(ErasedCredential?, version: Int)
        /// Ended at once, while still holding its slot.
        case failNow(Failure)
        case cancelledNow
        /// Woken after parking by the refresh's end, holding a slot it took for the request, with
        /// the first look at the next attempt taken (a send, recorded as `running` there).
        case granted(GateStateMachine<Handles>.Slot)
        /// Woken after parking (without a slot): queue for a slot again.
        case proceed
        case fail(Failure)
        case cancelled
    }

    /// How an attempt (or the refresh) waiting for a slot goes on.
    enum SlotGrant: Sendable {
        /// The slot, with the first look at an attempt taken by the transition that started it.
        case started(GateStateMachine<Handles>.Slot)
        case cancelled
        case shutDown
    }

    /// What a caller of ``send(_:body:priority:coalescingKey:timeout:authorization:retry:metadata:trace:)``
    /// is woken with.
    enum Delivery: Sendable {
        /// The flight ended: its outcome, shared by every caller on it.
        case ended(Handoff<Result<GateResponse, GateError>>)
        /// This caller was cancelled before the flight ended.
        case cancelled
        /// Refused before a flight opened.
        case refused(GateError)
    }

    /// A flight's task and what opening the flight left to tell (`initial`), shared by the
    /// transition that opened the flight, the code that starts its task once the lock is
    /// released, and whichever transition ends the flight.
    ///
    /// The task is started after the lock is released, because starting it enqueues a job on
    /// the caller's task executor, which may be user code (a `TaskExecutor`). A flight can end
    /// (its last caller leaves, a shutdown) before its task is attached: whichever of
    /// ``attach(_:)`` and ``cancel()`` comes second cancels the task, so a flight's task is
    /// cancelled whenever its flight ended early, without a second lock acquisition.
    final class FlightWork: Sendable {
        private enum Phase: UInt8, AtomicRepresentable {
            case waiting
            case attached
            case cancelled
        }

        /// What opening the flight left to tell. Written once, in the transition that opens the
        /// flight, under the gate's lock, before that transition releases it; every read comes
        /// after that transition — the code that starts the task, which runs after the lock is
        /// released, or a later transition — so the lock orders the write before them.
        nonisolated(unsafe) var opening: Publication = .none
        private let told = Atomic<Bool>(false)
        private let phase = Atomic<Phase>(.waiting)
        /// Written once, by ``attach(_:)``, before its releasing exchange of `phase` to
        /// `attached`; read only by ``cancel()`` after an acquiring exchange that saw `attached`.
        /// So every read happens after the one write, and the one write after no read.
        nonisolated(unsafe) private var task: Task<Void, Never>?

        /// Tells the opening once: the first call wins.
        func tell(_ storage: GateStorage) {
            if !told.exchange(true, ordering: .acquiringAndReleasing) { storage.publish(opening) }
        }

        /// The flight's task, started; cancelled at once if the flight has already ended.
        func attach(_ task: Task<Void, Never>) {
            self.task = task
            let (attached, _) = phase.compareExchange(
                expected: .waiting, desired: .attached, ordering: .acquiringAndReleasing)
            if !attached { task.cancel() }
        }

        /// The flight ended early: cancels its task, now or when it is attached.
        func cancel() {
            let (exchanged, original) = phase.compareExchange(
                expected: .waiting, desired: .cancelled, ordering: .acquiringAndReleasing)
            if !exchanged, original == .attached { task?.cancel() }
        }
    }

    /// A flight opened by a transition, whose task is started once the lock is released.
    private struct FlightStart: Sendable {
        var work: FlightWork
        var run: @Sendable () async -> Void
    }

    private struct State {
        var machine: Machine
        var journal: JournalBuffer<GateEvent>
        /// The task of the running refresh, so a sign-in, sign-out or shutdown can cancel it.
        var refreshTask: (id: UInt64, task: Task<Void, Never>)?
        /// Test hooks' waiters (RequestGate+Testing.swift): empty until a test waits.
        var parkedWaiters = CountWaiters<Void>()
        var queuedWaiters = CountWaiters<Void>()
        var idleWaiters = WaiterSet<Bool>()
        /// The attempts (or refresh) this transition gave a slot, to resume once it is over.
        var slotStarts: [Machine.SlotStart] = []
        /// Set by the shutdown: its transition's events are the journal's last.
        var finishesJournal = false
        var queueDepth = QueueDepth()

        /// Ends a transition: journals its events and takes what must be told or resumed once
        /// the lock is released.
        mutating func commit(_ events: [GateEvent]) -> Publication {
            var readers = journal.append(contentsOf: events)
            if finishesJournal && !journal.isFinished { readers += journal.finish() }
            var publication = Publication(events: events, queueDepth: queueDepth.sample(machine.slots.queuedCount))
            // Most transitions wake nobody: then nothing but the events is carried out.
            guard
                !slotStarts.isEmpty || !readers.isEmpty || !parkedWaiters.isEmpty || !queuedWaiters.isEmpty
                    || !idleWaiters.isEmpty
            else { return publication }
            var wakeups = Wakeups(slotStarts: slotStarts, readers: readers)
            slotStarts.removeAll()
            // The hooks' waiters: checked only while a test waits.
            if !parkedWaiters.isEmpty {
                wakeups.hooks += parkedWaiters.takeSatisfied(by: machine.credentials.parkedCount)
            }
            if !queuedWaiters.isEmpty { wakeups.hooks += queuedWaiters.takeSatisfied(by: machine.slots.queuedCount) }
            if !idleWaiters.isEmpty, machine.slots.isIdle { wakeups.idle = idleWaiters.removeAll() }
            publication.wakeups = wakeups
            return publication
        }

        /// Gives a slot back; what starts now is resumed when the transition is over.
        mutating func releaseSlot(_ priority: Priority, events: inout [GateEvent]) {
            start(machine.releaseSlot(priority, events: &events))
        }

        /// Keeps `starts` to resume once the transition is over: taken whole when nothing else
        /// is (each start holds its look's credential, whose closures a copy would retain).
        mutating func start(_ starts: [Machine.SlotStart]) {
            if slotStarts.isEmpty { slotStarts = starts } else if !starts.isEmpty { slotStarts += starts }
        }
    }

    /// A refresh a transition decided, to start once the lock is released.
    private struct RefreshStart: Sendable {
        var flight: RefreshFlight
        var old: ErasedCredential?
    }

    /// What a transition that may park a request leaves to do.
    private struct ParkEffect: Sendable {
        var publication: Publication
        var refresh: RefreshStart?
    }

    /// One attempt's outcome on the wire.
    private enum Sent {
        case response(HTTPResponse, [UInt8], ResponseVerdict)
        case transportFailed(any Error)
    }

    private typealias Slot = Machine.Slot

    let configuration: GateConfiguration
    /// Whether the user's `requiresRefresh` judges credentials before a send.
    private let judges: Bool
    private let transport: any GateTransport
    private let cache: (any ResponseCache)?
    /// Read for `now` (refresh window, deadlines); the gate sleeps only through the three below,
    /// each tagged with its purpose so a test clock tells them apart.
    private let clock: ClockSource
    /// Requests' timeouts: one timer task at most, however many requests have a deadline.
    private let requestTimer: DeadlineTimer
    /// The running refresh's deadline. A timer of its own, so it sleeps apart from requests'.
    private let refreshTimer: DeadlineTimer
    /// Sleeps between a request's attempts.
    private let backoffClock: ClockSource
    /// The log, when the gate has a logger.
    private let requestLog: GateRequestLog?
    private let classify: @Sendable (HTTPResponse) -> ResponseVerdict
    private let refresher: @Sendable (ErasedCredential?) async throws -> ErasedCredential
    private let state: Lock<State>
    /// The gate's request ids, 0 up, drawn without the lock (a caller who joins a flight draws
    /// one too, as does a ``RequestGate/refresh()`` caller).
    private let requestIDs = AtomicCounter()
    /// Spans and metrics, or `nil` when the configuration's telemetry records nothing.
    let instruments: GateInstruments?

    init(
        transport: any GateTransport,
        credential: ErasedCredential?,
        configuration: GateConfiguration,
        cache: (any ResponseCache)?,
        clock: ClockSource,
        logger: Logger?,
        classify: @escaping @Sendable (HTTPResponse) -> ResponseVerdict,
        judges: Bool,
        refresh: @escaping @Sendable (ErasedCredential?) async throws -> ErasedCredential
    ) {
        self.transport = transport
        self.configuration = configuration
        self.judges = judges
        self.cache = cache
        self.clock = clock
        self.requestTimer = DeadlineTimer(clock: clock.purpose(.requestTimeout))
        self.refreshTimer = DeadlineTimer(clock: clock.purpose(.refreshTimeout))
        self.backoffClock = clock.purpose(.gateBackoff)
        self.requestLog = logger.map(GateRequestLog.init)
        self.classify = classify
        let instruments = GateInstruments(configuration.telemetry, clock: clock)
        self.instruments = instruments
        self.refresher = instruments?.traced(refresh) ?? refresh
        let window = configuration.refreshWindow.map { ($0.maxRefreshes, $0.period) }
        let schedule = RetrySchedule(initial: configuration.initialBackoff, maximum: configuration.maxBackoff)
        self.state = Lock(
            State(
                machine: Machine(
                    credentials: Machine.Credentials(
                        credential: credential, refreshWindow: window, retrySchedule: schedule,
                        jitterSeed: configuration.jitterSeed),
                    slots: SchedulerStateMachine(
                        limit: configuration.maxConcurrentRequests, agingThreshold: configuration.agingThreshold)),
                journal: JournalBuffer(keepingNewest: configuration.eventRetention)))
    }

    var credentialVersion: Int { state.withLock { $0.machine.credentials.version } }

    /// The events journaled so far, oldest retained first.
    var recordedEvents: [GateEvent] { state.withLock { $0.journal.snapshot } }

    // MARK: - Transitions

    /// Runs one transition under the lock; the events it produced are journaled in the same
    /// critical section and told (readers woken, logger and instruments) once it is released.
    @discardableResult
    private func transition<T>(
        _ body: (inout sending State, inout [GateEvent]) -> sending T
    ) -> sending T {
        let (result, publication) = state.withLock { state -> sending (T, Publication) in
            var events: [GateEvent] = []
            let result = body(&state, &events)
            return (result, state.commit(events))
        }
        publish(publication)
        return result
    }

    private func publish(_ publication: Publication) {
        // First: whoever this wakes finds the gauge as this transition left it.
        if let depth = publication.queueDepth { instruments?.record(depth) }
        if let wakeups = publication.wakeups {
            for start in wakeups.slotStarts { start.waiter.resume(returning: .started(start.slot)) }
            for reader in wakeups.readers { reader.resume(returning: ()) }
            for hook in wakeups.hooks { hook.resume() }
            for waiter in wakeups.idle { waiter.resume(returning: true) }
        }
        guard !publication.events.isEmpty else { return }
        requestLog?.log(publication.events)
        instruments?.record(publication.events)
    }

    // MARK: - Sending

    func send(
        _ request: HTTPRequest,
        body: RequestBody?,
        priority: Priority,
        coalescingKey: String?,
        timeout: Duration?,
        authorization: RequestAuthorization,
        retry: RequestRetryPolicy,
        metadata: Logger.Metadata = [:],
        trace: GateInstruments.RequestTrace? = nil
    ) async throws(GateError) -> GateResponse {
        let name = Self.name(of: request)
        if let timeout, timeout < .zero { throw .negativeDuration(name, "timeout", timeout) }
        if let attempts = retry.maxAttempts, attempts < 1 {
            throw .invalidConfiguration("RequestRetryPolicy.maxAttempts", attempts, minimum: 1, request: name)
        }
        let timeout = timeout ?? configuration.requestTimeout
        let needsAuthorization = authorization.isRequired
        let id = requestIDs.next()
        if let trace { instruments?.register(trace, as: id) }
        let key = coalescingKey.map(FlightKey.coalesced) ?? .request(id)
        typealias Opened = (publication: Publication, start: FlightStart?)
        let delivery = await state.suspend(
            { (state: inout State, caller: WaiterSet<Delivery>.Waiter) -> SuspensionDecision<Delivery, Opened> in
                var events: [GateEvent] = []
                let work = FlightWork()
                switch state.machine.open(
                    key, request: id, name: name, priority: priority, needsAuthorization: needsAuthorization,
                    callerID: caller.id, caller: caller, work: work, events: &events)
                {
                case .joined:
                    return .wait((state.commit(events), nil))
                case .refused(let refused):
                    return .resume(.refused(Self.error(refused, name: name)), (state.commit(events), nil))
                case .opened:
                    work.opening = state.commit(events)
                    // The task starts once the lock is released. It tells `initial` first, so the
                    // logger and the instruments hear of the request before any later event of it.
                    let start = FlightStart(work: work) { [self] in
                        work.tell(self)
                        await fly(
                            request, body: body, key: key, id: id, name: name, timeout: timeout,
                            needsAuthorization: needsAuthorization, retry: retry)
                    }
                    return .wait((.none, start))
                }
            },
            cancelledNow: { state in (.cancelled, (state.commit([]), nil)) },
            perform: { opened in
                self.publish(opened.publication)
                if let start = opened.start {
                    self.requestLog?.open(id, request, metadata: metadata)
                    start.work.attach(Task(executorPreference: TaskPlacement.executor, operation: start.run))
                }
            },
            cancelled: { @Sendable [self] state, callerID in
                leave(&state, key: key, caller: callerID)
            })
        switch delivery {
        case .ended(let outcome):
            switch outcome.value {
            case .success(let reply): return reply
            // The flights share one shutdown error; each caller's names its own request.
            case .failure(let error) where error.code == .shutDown: throw .shutDown(name)
            case .failure(let error): throw error
            }
        case .cancelled: throw .cancelled(name)
        case .refused(let error): throw error
        }
    }

    /// A caller of flight `key` was cancelled: it leaves; the last caller to leave ends the
    /// flight as cancelled and cancels its work. `nil` when the flight ended first (the caller
    /// then has its outcome, so what it sees and what the journal says agree).
    private func leave(_ state: inout State, key: FlightKey, caller: UInt64) -> (@Sendable () -> Void)? {
        var events: [GateEvent] = []
        let waiter: WaiterSet<Delivery>.Waiter
        var ended: FlightWork?
        switch state.machine.leave(key, caller: caller, events: &events) {
        case .gone: return nil
        case .left(let left): waiter = left
        case .ended(let left, let work):
            waiter = left
            ended = work
        }
        let publication = state.commit(events)
        return { [self, ended] in
            ended?.tell(self)
            publish(publication)
            ended?.cancel()
            waiter.resume(returning: .cancelled)
        }
    }

    /// Runs flight `key` to its end and settles it: the end is journaled, then every caller
    /// still on it is woken with the outcome — unless the flight ended already (its last
    /// caller left, or a shutdown took it), which then decided its outcome.
    private func fly(
        _ request: HTTPRequest,
        body: RequestBody?,
        key: FlightKey,
        id: UInt64,
        name: String,
        timeout: Duration?,
        needsAuthorization: Bool,
        retry: RequestRetryPolicy
    ) async {
        let result: Result<GateResponse, GateError>
        do {
            result = .success(
                try await drive(
                    request, body: body, key: key, id: id, name: name, timeout: timeout,
                    needsAuthorization: needsAuthorization, retry: retry))
        } catch let error as GateError {
            result = .failure(error)
        } catch is CancellationError {
            result = .failure(.cancelled(name))
        } catch {
            result = .failure(.transport(name, attempts: 0, error))
        }
        let end: GateEvent =
            switch result {
            case .success(let reply) where reply.isFromCache: .useCache(request: id)
            case .success(let reply): .success(request: id, status: reply.response.status.code)
            case .failure(let error): .failure(request: id, code: error.code)
            }
        if case .failure(let error) = result { requestLog?.noteFailure(id, reason: error.message) }
        let callers = transition { state, events -> [WaiterSet<Delivery>.Waiter] in
            state.machine.settle(key, request: id, end: end, events: &events).callers
        }
        requestLog?.close(id)
        guard !callers.isEmpty else { return }
        let outcome = Handoff(result)
        for caller in callers { caller.resume(returning: .ended(outcome)) }
    }

    private func drive(
        _ request: HTTPRequest,
        body: RequestBody?,
        key: FlightKey,
        id: UInt64,
        name: String,
        timeout: Duration?,
        needsAuthorization: Bool,
        retry: RequestRetryPolicy
    ) async throws -> GateResponse {
        // Only a deadline reads the last attempt's error: without one, nothing is kept.
        let lastError = timeout == nil ? nil : LastTransportError()
        let work: @Sendable () async throws -> GateResponse = {
            try await self.attemptUntilSettled(
                request, body: body, key: key, id: id, name: name, needsAuthorization: needsAuthorization,
                retry: retry, lastError: lastError)
        }
        do {
            guard let timeout else { return try await work() }
            let outcome: Result<GateResponse, any Error> = await requestTimer.race(
                {
                    do { return .success(try await work()) } catch { return .failure(error) }
                },
                until: clock.now + timeout,
                onDeadline: { .failure(GateError.timedOut(name, after: timeout, lastError: lastError?.value)) },
                onCancel: { .failure(GateError.cancelled(name)) }
            )
            return try outcome.get()
        } catch let error as GateError where [.transport, .retriesExhausted, .timedOut].contains(error.code) {
            guard let cache, var cached = await cache.response(for: request) else { throw error }
            cached.isFromCache = true
            return cached
        }
    }

    private func attemptUntilSettled(
        _ request: HTTPRequest,
        body: RequestBody?,
        key: FlightKey,
        id: UInt64,
        name: String,
        needsAuthorization: Bool,
        retry: RequestRetryPolicy,
        lastError: LastTransportError?
    ) async throws -> GateResponse {
        let budget = retry.maxAttempts ?? configuration.maxAttempts
        let replayable = body?.isReplayable ?? true
        // Why a failure (an error on the wire, a "retry" verdict) may not be answered by sending
        // again: the server may have carried the request out already.
        let retryRefusal = retry.refusal(for: request)
        var sent = 0
        /// A slot the refresh's end handed this request when it woke it from parking: its next
        /// attempt goes on with it instead of queuing again.
        var handedSlot: Slot?
        /// The status of the last response, which every error that ends the request carries.
        var lastStatus: Int?
        /// Whether this request has already refreshed a credential judged stale: it does so
        /// once, then sends what is current and lets the server judge, so a judge that calls
        /// every credential stale costs a request one refresh, not a loop of them.
        var refreshedStale = false

        /// Whether one more send is allowed; throws the error that ends the request if not.
        func mayResend(_ last: @autoclosure () -> String) throws {
            guard sent < budget else {
                throw GateError.retriesExhausted(name, attempts: sent, last: last(), status: lastStatus)
            }
            guard replayable || sent == 0 else { throw GateError.bodyNotReplayable(name, status: lastStatus) }
        }

        while true {
            var slot: Slot
            if let handed = handedSlot {
                // Its look is a send already recorded as `running`: it goes out, as any request
                // whose look said send does, and a cancellation reaches it on the wire.
                slot = handed
                handedSlot = nil
            } else {
                if Task.isCancelled { throw GateError.cancelled(name) }
                let judgesNow = judges && !refreshedStale
                switch await acquireSlot(
                    for: .attempt(key: key, request: id, number: sent + 1, needsAuthorization: needsAuthorization),
                    lookWithJudge: judgesNow)
                {
                case .granted(let granted): slot = granted
                case .cancelled: throw GateError.cancelled(name)
                case .shutDown: throw GateError.shutDown(name)
                }
            }
            let credential: ErasedCredential?
            let version: Int
            switch await authorizeOrPark(
                key: key, id: id, attempt: sent + 1, needsAuthorization: needsAuthorization, slot: slot,
                refreshedStale: &refreshedStale)
            {
            case .granted(let handed):
                // Parked and woken holding a new slot: this attempt goes on with it.
                handedSlot = handed
                continue
            case .send(let current, let currentVersion):
                credential = current
                version = currentVersion
                sent += 1
            case .failNow(let failure):
                releaseSlot(slot.priority)
                throw Self.error(failure, name: name, status: lastStatus)
            case .cancelledNow:
                releaseSlot(slot.priority)
                throw GateError.cancelled(name)
            case .proceed:
                continue
            case .fail(let failure):
                throw Self.error(failure, name: name, status: lastStatus)
            case .cancelled:
                throw GateError.cancelled(name)
            }

            let outcome = await sendOnce(request, body: body, credential: credential)
            if case .transportFailed(let error) = outcome { lastError?.record(error) } else { lastError?.record(nil) }
            if case .response(let response, _, .credentialExpired) = outcome, needsAuthorization {
                lastStatus = response.status.code
                // The slot is given back in the rejection's transition: the request that takes
                // it next already sees the refresh. A rejected credential means the server did
                // nothing, so the request is sent again whatever its retry policy, within its
                // budget.
                let last = "credential v\(version) rejected"
                guard sent < budget, replayable else {
                    // Still decide the refresh this rejection calls for, then give up — with the
                    // more specific cause when that decision refused the refresh.
                    if case .fail(let failure) = await rejected(
                        key: key, id: id, version: version, nextAttempt: sent + 1, slot: slot.priority, waits: false,
                        reason: .rejected)
                    {
                        throw Self.error(failure, name: name, status: lastStatus)
                    }
                    try mayResend(last)
                    continue
                }
                switch await rejected(
                    key: key, id: id, version: version, nextAttempt: sent + 1, slot: slot.priority, waits: true,
                    reason: .rejected)
                {
                case .granted(let handed):
                    handedSlot = handed
                    continue
                case .proceed, .send: continue
                case .fail(let failure), .failNow(let failure):
                    throw Self.error(failure, name: name, status: lastStatus)
                case .cancelled, .cancelledNow: throw GateError.cancelled(name)
                }
            }

            switch outcome {
            case .response(let response, let bytes, let verdict):
                let status = response.status.code
                lastStatus = status
                switch verdict {
                case .success:
                    releaseSlot(slot.priority)
                    let reply = GateResponse(response: response, body: bytes)
                    await cache?.store(reply, for: request)
                    return reply
                case .retry:
                    if let retryRefusal {
                        releaseSlot(slot.priority)
                        throw GateError.retriesExhausted(
                            name, attempts: sent, last: "status \(status); \(retryRefusal)", status: status)
                    }
                    do { try mayResend("status \(status)") } catch {
                        releaseSlot(slot.priority)
                        throw error
                    }
                    try await backOff(
                        id: id, attempt: sent, name: name, releasing: slot.priority,
                        retryAfter: retryAfter(in: response), status: status, reason: "status \(status)")
                default:
                    releaseSlot(slot.priority)
                    throw GateError.rejected(name, status: status)
                }

            case .transportFailed(let error):
                if error is CancellationError || Task.isCancelled {
                    releaseSlot(slot.priority)
                    throw GateError.cancelled(name)
                }
                // The transport's own judgement is user code: called here, outside every lock.
                let why: String? =
                    if transport.classify(error) == .permanent {
                        "not retried: the error is permanent"
                    } else if let retryRefusal {
                        retryRefusal
                    } else if !replayable {
                        "not retried: its body can be sent only once"
                    } else {
                        nil
                    }
                guard why == nil, sent < budget else {
                    releaseSlot(slot.priority)
                    throw GateError.transport(name, attempts: sent, error, why: why, status: lastStatus)
                }
                try await backOff(
                    id: id, attempt: sent, name: name, releasing: slot.priority, retryAfter: nil, status: lastStatus,
                    reason: "transport error: \(TransportErrorText.describe(error))")
            }
        }
    }

    // MARK: - Slots

    private typealias SlotClaimant = Machine.SlotClaimant

    private enum SlotOutcome {
        case granted(Slot)
        case cancelled
        case shutDown
    }

    /// Waits for a slot. When one is free at once, the same transition takes the first look at
    /// an attempt (see ``authorizeOrPark(key:id:attempt:needsAuthorization:slot:refreshedStale:)``),
    /// unless `lookWithJudge` and the look would need the judge's verdict.
    private func acquireSlot(for claimant: SlotClaimant, lookWithJudge: Bool) async -> SlotOutcome {
        // Most attempts find a slot free: no continuation, no cancellation handler.
        let fast = transition { state, events -> SlotOutcome? in
            switch state.machine.takeSlotNow(
                for: claimant, isCancelled: Task.isCancelled, judges: lookWithJudge, events: &events)
            {
            case .granted(let slot): return .granted(slot)
            case .busy: return nil
            case .shutDown: return .shutDown
            }
        }
        if let fast { return fast }
        let grant = await state.suspend(
            {
                (state: inout State, waiter: WaiterSet<SlotGrant>.Waiter) -> SuspensionDecision<SlotGrant, Publication>
                in
                var events: [GateEvent] = []
                switch state.machine.queue(
                    claimant, id: waiter.id, waiter: waiter, judges: lookWithJudge, events: &events)
                {
                case .start(let slot):
                    return .resume(.started(slot), state.commit(events))
                case .shutDown:
                    return .resume(.shutDown, state.commit(events))
                case .enqueued:
                    return .wait(state.commit(events))
                }
            },
            cancelledNow: { state in (.cancelled, state.commit([])) },
            perform: { publication in self.publish(publication) },
            cancelled: { @Sendable [self] state, waiterID in
                var events: [GateEvent] = []
                guard let removed = state.machine.cancelQueued(id: waiterID, events: &events) else { return nil }
                state.start(removed.started)
                let publication = state.commit(events)
                return { [self] in
                    publish(publication)
                    removed.cancelled.resume(returning: .cancelled)
                }
            })
        switch grant {
        case .started(let slot): return .granted(slot)
        case .cancelled: return .cancelled
        case .shutDown: return .shutDown
        }
    }

    private func releaseSlot(_ priority: Priority) {
        transition { state, events in state.releaseSlot(priority, events: &events) }
    }

    // MARK: - Authorizing

    /// The request holds `slot`. Either it may send now (keeping the slot), or it parks behind
    /// the refresh (giving the slot back) until the refresh ends.
    ///
    /// With a `requiresRefresh` judge, the credential the request would send is judged first,
    /// outside the lock (it is user code), and the send is confirmed in a second transition
    /// only if the judged version is still current; a stale one starts the refresh as a
    /// rejection would, and the request parks behind it.
    private func authorizeOrPark(
        key: FlightKey, id: UInt64, attempt: Int, needsAuthorization: Bool, slot: Slot, refreshedStale: inout Bool
    ) async -> Resumption {
        var judged: (version: Int, stale: Bool)?
        let judgesNow = judges && !refreshedStale
        var look = slot.look
        while true {
            if look == nil {
                look = transition { state, events -> Machine.Look in
                    state.machine.look(
                        request: id, attempt: attempt, epoch: slot.epoch, needsAuthorization: needsAuthorization,
                        isCancelled: Task.isCancelled, judges: judgesNow, judged: judged, events: &events)
                }
            }
            switch look {
            case .send(let credential, let version)?:
                return .send(credential, version: version)
            case .failNow(let failure)?:
                return .failNow(failure)
            case .cancelledNow?:
                return .cancelledNow
            case .judge(let credential, let version)?:
                // User code: outside the lock.
                judged = (version, credential.isStale?() ?? false)
                look = nil
            case .stale(let version)?:
                refreshedStale = true
                return await rejected(
                    key: key, id: id, version: version, nextAttempt: attempt, slot: slot.priority, waits: true,
                    reason: .stale)
            case .park?, nil:
                return await park(
                    key: key, id: id, attempt: attempt, epoch: slot.epoch, needsAuthorization: needsAuthorization,
                    slot: slot.priority)
            }
        }
    }

    /// Parks a request that found a refresh running, or no credential yet (the first request
    /// then starts the refresh), giving its slot back in the same transition; unless the state
    /// changed since the first look, and it may send or must fail after all.
    private func park(
        key: FlightKey, id: UInt64, attempt: Int, epoch: Int, needsAuthorization: Bool, slot: Priority
    ) async -> Resumption {
        let now = clock.now
        return await suspend(
            id: id,
            whenCancelled: { _, _ in Machine.ParkStep(outcome: .cancelledNow) },
            decide: { state, events, waiter in
                state.machine.park(
                    key, request: id, attempt: attempt, epoch: epoch, needsAuthorization: needsAuthorization,
                    slot: slot,
                    waiter: waiter, now: now, events: &events)
            })
    }

    /// The server rejected credential `version` of request `id` (or it was judged stale before
    /// sending: `reason`), which still holds `slot`; the slot is given back in the same
    /// transition. With `waits`, the request parks if a refresh runs or starts; without, it
    /// only starts the refresh the rejection calls for — as does a request cancelled before
    /// this transition.
    private func rejected(
        key: FlightKey, id: UInt64, version: Int, nextAttempt: Int, slot: Priority, waits: Bool,
        reason: Machine.ParkReason
    ) async -> Resumption {
        let now = clock.now
        return await suspend(
            id: id,
            whenCancelled: { state, events in
                state.machine.rejectedWhileCancelled(
                    request: id, version: version, slot: slot, reason: reason, now: now, events: &events)
            },
            decide: { state, events, waiter in
                state.machine.rejected(
                    key, request: id, version: version, nextAttempt: nextAttempt, slot: slot, reason: reason,
                    waiter: waits ? waiter : nil, now: now, events: &events)
            })
    }

    /// Runs `decide`, one transition, with a waiter for request `id`, and carries out what it
    /// decided once the lock is released: tells the events, starts the slots it freed and the
    /// refresh it decided, and resumes the request at once unless it parked. A request
    /// cancelled before the transition runs `whenCancelled` instead (which keeps its slot for
    /// a park, and gives it back and still starts a rejection's refresh for a rejection), and
    /// goes on at once; one cancelled while parked is taken out of the machine by its
    /// cancellation handler.
    private func suspend(
        id: UInt64,
        whenCancelled: (inout State, inout [GateEvent]) -> Machine.ParkStep,
        decide: (inout State, inout [GateEvent], WaiterSet<Resumption>.Waiter) -> Machine.ParkStep
    ) async -> Resumption {
        /// Carries out a step under the lock: its slot starts, its events; what is left is
        /// for once the lock is released.
        func commit(_ step: Machine.ParkStep, _ state: inout State, _ events: [GateEvent]) -> ParkEffect {
            state.start(step.slotStarts)
            return ParkEffect(
                publication: state.commit(events),
                refresh: step.refresh.map { RefreshStart(flight: $0.flight, old: $0.replacing) })
        }
        return await state.suspend(
            {
                (state: inout State, waiter: WaiterSet<Resumption>.Waiter) -> SuspensionDecision<Resumption, ParkEffect>
                in
                var events: [GateEvent] = []
                let step = decide(&state, &events, waiter)
                let effect = commit(step, &state, events)
                guard let resumption = Self.resumption(step.outcome) else { return .wait(effect) }
                return .resume(resumption, effect)
            },
            cancelledNow: { state in
                var events: [GateEvent] = []
                let step = whenCancelled(&state, &events)
                return (Self.resumption(step.outcome) ?? .cancelledNow, commit(step, &state, events))
            },
            perform: { effect in
                self.publish(effect.publication)
                if let refresh = effect.refresh { self.startRefresh(refresh.flight, replacing: refresh.old) }
            },
            cancelled: { @Sendable [self] state, _ in
                guard let waiter = state.machine.cancelParked(request: id) else { return nil }
                let publication = state.commit([])
                return { [self] in
                    publish(publication)
                    waiter.resume(returning: .cancelled)
                }
            })
    }

    /// How a request goes on after a parking transition; `nil` when it waits.
    private static func resumption(_ outcome: Machine.ParkStep.Outcome) -> Resumption? {
        switch outcome {
        case .wait: nil
        case .send(let credential, let version): .send(credential, version: version)
        case .failNow(let failure): .failNow(failure)
        case .cancelledNow: .cancelledNow
        case .fail(let failure): .fail(failure)
        case .proceed: .proceed
        case .cancelled: .cancelled
        }
    }

    private static func recordRefusal(_ failure: Failure, events: inout [GateEvent]) {
        Machine.recordRefusal(failure, events: &events)
    }

    private func sendOnce(_ request: HTTPRequest, body: RequestBody?, credential: ErasedCredential?) async -> Sent {
        var authorized = request
        credential?.authorize(&authorized)
        instruments?.inject(into: &authorized)
        do {
            let (response, bytes) = try await transport.send(authorized, body: body)
            return .response(response, bytes, classify(response))
        } catch {
            return .transportFailed(error)
        }
    }

    /// Gives the slot back and waits before the next attempt (one transition: the slot, the
    /// jitter, the `retry` event).
    private func backOff(
        id: UInt64,
        attempt: Int,
        name: String,
        releasing slot: Priority,
        retryAfter: Duration?,
        status: Int?,
        reason: @autoclosure () -> String
    ) async throws {
        if let retryAfter, retryAfter > configuration.maxRetryAfter {
            releaseSlot(slot)
            throw GateError.retriesExhausted(
                name,
                attempts: attempt,
                last: "Retry-After \(retryAfter) exceeds the cap of \(configuration.maxRetryAfter)",
                status: status
            )
        }
        requestLog?.noteRetry(id, reason: reason())
        let delay = transition { state, events -> Duration in
            let backOff = state.machine.backOff(
                request: id, attempt: attempt, retryAfter: retryAfter, slot: slot, events: &events)
            state.start(backOff.slotStarts)
            return backOff.delay
        }
        do {
            try await backoffClock.sleep(for: delay)
        } catch {
            throw GateError.cancelled(name)
        }
    }

    private func retryAfter(in response: HTTPResponse) -> Duration? {
        guard let value = response.headerFields[.retryAfter], let seconds = Int(value), seconds >= 0 else {
            return nil
        }
        return .seconds(seconds)
    }

    // MARK: - The refresh

    /// Runs refresh `flight` in a task of its own, so that no waiting request owns it: a
    /// cancelled waiter leaves, the refresh goes on for the others.
    ///
    /// The gate is already refreshing (the transition that decided the refresh said so), so no
    /// request is authorized with the old credential any more. The refresh still takes the
    /// `unique` slot: it waits for the attempts already authorized with the old credential to
    /// come back from the wire, so the server never sees the old credential after it issued
    /// the new one. No parked request holds a slot, so this cannot deadlock. The deadline
    /// counts from the moment the refresh has the slot.
    private func startRefresh(_ flight: RefreshFlight, replacing old: ErasedCredential?) {
        let refresher = self.refresher
        let timeout = configuration.refreshTimeout
        let timer = refreshTimer
        let task = Task(executorPreference: TaskPlacement.executor) {
            let outcome: RefreshOutcome
            switch await self.acquireSlot(for: .refresh, lookWithJudge: false) {
            case .granted:
                outcome = await timer.race(
                    {
                        do { return .finished(.success(try await refresher(old))) } catch {
                            return .finished(.failure(error))
                        }
                    },
                    until: timer.clock.now + timeout,
                    onDeadline: { .deadlineMissed },
                    onCancel: { .cancelled }
                )
                self.finishRefresh(flight, outcome, timeout: timeout, releasingSlot: true)
            case .cancelled, .shutDown:
                // Cancelled or shut down while waiting for the slot: whatever did it has
                // already replaced this refresh.
                self.finishRefresh(flight, .cancelled, timeout: timeout, releasingSlot: false)
            }
        }
        let current = state.withLock { state -> Bool in
            guard state.machine.isRunning(flight) else { return false }
            state.refreshTask = (flight.id, task)
            return true
        }
        // A sign-in, sign-out or shutdown replaced the refresh before its task was recorded.
        if !current { task.cancel() }
    }

    private func finishRefresh(
        _ flight: RefreshFlight, _ outcome: RefreshOutcome, timeout: Duration, releasingSlot: Bool
    ) {
        let result: Machine.RefreshResult =
            switch outcome {
            case .finished(.success(let credential)): .succeeded(credential)
            case .finished(.failure(let error)): .failed(.refreshFailed(RefreshError(error: error)))
            case .deadlineMissed: .failed(.refreshTimedOut(after: timeout))
            case .cancelled: .cancelled
            }
        let ended = transition { state, events -> Machine.RefreshEndStep in
            let step = state.machine.refreshEnded(flight, result, releasingSlot: releasingSlot, events: &events)
            state.start(step.slotStarts)
            if step.settled, state.refreshTask?.id == flight.id { state.refreshTask = nil }
            return step
        }
        for (waiter, wake) in ended.waiters {
            switch wake {
            case .granted(let slot): waiter.resume(returning: .granted(slot))
            case .proceed: waiter.resume(returning: .proceed)
            case .fail(let failure): waiter.resume(returning: .fail(failure))
            }
        }
    }

    // MARK: - Credentials from outside

    /// Starts a refresh now, or joins the running one, and returns the credential version
    /// current when it ended.
    func refreshNow() async throws(GateError) -> Int {
        let id = requestIDs.next()
        let now = clock.now
        let resumption = await suspend(
            id: id,
            whenCancelled: { _, _ in Machine.ParkStep(outcome: .cancelled) },
            decide: { state, events, waiter in
                state.machine.refreshNow(caller: id, waiter: waiter, now: now, events: &events)
            })
        switch resumption {
        case .send(_, let version): return version
        // A refresh() caller is never handed a slot: it needs none.
        case .proceed, .granted: return credentialVersion
        case .fail(let failure), .failNow(let failure): throw Self.error(failure, name: nil)
        case .cancelled, .cancelledNow: throw GateError.cancelled(nil)
        }
    }

    func signIn(_ credential: ErasedCredential) {
        replace(.signIn(credential))
    }

    func signOut() {
        replace(.signOut)
    }

    /// Ends every pending request once with ``GateError/Code/shutDown`` (cancelling what is on
    /// the wire and the running refresh), refuses new ones, and finishes the journal — one
    /// transition.
    func shutdown() {
        replace(.shutdown)
    }

    private typealias Replacement = Machine.Replacement

    /// What a sign-in, sign-out or shutdown leaves to do once the lock is released.
    private struct ReplaceEffect: Sendable {
        var step: Machine.ReplaceStep
        /// The task of the refresh it replaced, to cancel.
        var task: Task<Void, Never>?
    }

    /// One transition (``GateStateMachine/replace(_:events:)``), then the tasks and waiters it
    /// let go.
    private func replace(_ replacement: Replacement) {
        let (effect, publication) = state.withLock { state -> (ReplaceEffect, Publication) in
            var events: [GateEvent] = []
            var effect = ReplaceEffect(step: state.machine.replace(replacement, events: &events))
            if let cancelled = effect.step.cancelledRefresh {
                if state.refreshTask?.id == cancelled.id { effect.task = state.refreshTask?.task }
                state.refreshTask = nil
            }
            // A shutdown's events are the journal's last; then readers get the end.
            if effect.step.finishesJournal { state.finishesJournal = true }
            return (effect, state.commit(events))
        }
        let step = effect.step
        // Flights the shutdown ended before their task told their opening: told first.
        for flight in step.flights.work { flight.tell(self) }
        publish(publication)
        for flight in step.flights.work { flight.cancel() }
        effect.task?.cancel()
        for waiter in step.flights.droppedSlots { waiter.resume(returning: .shutDown) }
        let outcome = Handoff(Result<GateResponse, GateError>.failure(.shutDown(nil)))
        for caller in step.flights.callers { caller.resume(returning: .ended(outcome)) }
        let resumption: Resumption = step.failure.map { .fail($0) } ?? .proceed
        for waiter in step.parked { waiter.resume(returning: resumption) }
    }

    /// How a refresh ended, as its race against the refresh deadline saw it.
    private enum RefreshOutcome: Sendable {
        case finished(Result<ErasedCredential, any Error>)
        case deadlineMissed
        /// The refresh task was cancelled (a sign-in, sign-out or shutdown replaced it).
        case cancelled
    }

    // MARK: - Test hooks' state

    /// For ``RequestGate/parkedRequests(atLeast:)``.
    func parkedRequests(atLeast count: Int) async {
        await state.wait(untilCountOf: { $0.machine.credentials.parkedCount }, reaches: count, waiters: \.parkedWaiters)
    }

    /// For ``RequestGate/queuedAttempts(atLeast:)``.
    func queuedAttempts(atLeast count: Int) async {
        await state.wait(untilCountOf: { $0.machine.slots.queuedCount }, reaches: count, waiters: \.queuedWaiters)
    }

    /// For ``RequestGate/whenIdle()``: no attempt and no refresh holds or waits for a slot.
    func whenIdle() async throws(CancellationError) {
        let idle = await state.suspend(
            { (state: inout State, waiter: WaiterSet<Bool>.Waiter) -> SuspensionDecision<Bool, Bool> in
                if state.machine.slots.isIdle { return .resume(true, true) }
                state.idleWaiters.insert(waiter)
                return .wait(false)
            },
            cancelledNow: { _ in (false, false) },
            cancelled: { @Sendable state, id in
                guard let waiter = state.idleWaiters.remove(id) else { return nil }
                return { waiter.resume(returning: false) }
            })
        if !idle { throw CancellationError() }
    }

    // MARK: - Names and errors

    /// Method and path without the query, where tokens sometimes hide.
    static func name(of request: HTTPRequest) -> String {
        request.method.rawValue + " " + path(of: request)
    }

    /// The error `failure` ends request `name` with (`nil`: a ``RequestGate/refresh()``);
    /// `status` is the request's last response's, if it had one.
    static func error(_ failure: Failure, name: String?, status: Int? = nil) -> GateError {
        let error: GateError =
            switch failure {
            case .refreshFailed(let cause): .refreshFailed(name, cause.error)
            case .refreshTimedOut(let timeout): .refreshTimedOut(name, after: timeout)
            case .refreshWindowExceeded(let refreshes, let period):
                .refreshWindowExceeded(name, refreshes: refreshes, period: period)
            case .signedOut: .signedOut(name)
            case .shutDown: .shutDown(name)
            }
        return error.withStatus(status)
    }
}

extension GateStorage: EventBatchSource {
    typealias Element = GateEvent

    func batch(from index: inout Int, limit: Int, isolation: isolated (any Actor)?) async -> [GateEvent] {
        await state.batch(from: &index, limit: limit, journal: \.journal)
    }
}
