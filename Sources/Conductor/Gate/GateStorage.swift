import HTTPTypes
import Logging

/// The machinery of a ``RequestGate``: the one place that takes the gate's lock, runs a
/// ``GateStateMachine`` transition under it, and performs the action after releasing it
/// (resuming continuations, starting or cancelling the refresh, calling the transport and the
/// user's closures).
///
/// Events are appended to the journal inside the transition that caused them, so the
/// journal's order is the order of the transitions: a `refreshStarted` is always before the
/// `running` of every request that carries the new credential, and a refresh's end is always
/// before the next refresh of the same version starts. Appending only records the event; the
/// readers it wakes are resumed after the lock is released.
///
/// Not generic: the credential is an ``ErasedCredential``, so the storage, its state machine
/// and its coalescer are compiled for concrete types and a request looks up no generic
/// metadata at run time (a generic storage spent a third of a request's instructions there).
final class GateStorage: Sendable {
    typealias Machine = GateStateMachine<ErasedCredential, CheckedContinuation<Resumption, Never>>
    typealias Failure = Machine.Failure
    typealias Flight = Machine.RefreshFlight

    /// How a request waiting on the credential goes on.
    enum Resumption: Sendable {
        /// Send now; the request still holds its slot.
        case send(ErasedCredential?, version: Int)
        /// Ended at once, while still holding its slot.
        case failNow(Failure)
        case cancelledNow
        /// Woken after parking (without a slot): queue for a slot again.
        case proceed
        case fail(Failure)
        case cancelled
    }

    private struct State {
        var machine: Machine
        /// The task of the running refresh, so a sign-in, sign-out or shutdown can cancel it.
        var refreshTask: (id: UInt64, task: Task<Void, Never>)?
        var nextRequestID: UInt64 = 0
        /// Test hook's waiters (RequestGate+Testing.swift): empty until a test waits for
        /// parked requests.
        var parkedWaiters = CountWaiters<Void>()
    }

    enum FlightKey: Hashable, Sendable {
        case request(UInt64)
        case coalesced(String)
    }

    /// What a request does after a transition that may park it.
    private enum Next {
        case resume(Resumption)
        /// Not parked (the request has no attempt left), but the transition decided a refresh.
        case resumeAndRefresh(Resumption, start: RefreshStart)
        /// Parked; starts this refresh first, when the transition decided one.
        case parked(start: RefreshStart?)
    }

    /// A refresh a transition decided, to start once the lock is released. (A struct, not a
    /// tuple: the compiler copies a tuple in an enum payload through the runtime's generic
    /// value witnesses.)
    private struct RefreshStart {
        var flight: Flight
        var old: ErasedCredential?
    }

    /// What the first look at a request in its slot found.
    private enum FirstLook {
        case resume(Resumption)
        /// The request would send `credential` (version `version`), which must be judged first.
        case judge(ErasedCredential, version: Int)
        /// The credential the request was about to send was judged stale.
        case stale(version: Int)
    }

    /// Why a request parks behind a refresh, which the event that records it says.
    private enum ParkReason {
        /// The server rejected the credential the request carried.
        case rejected
        /// The credential was judged stale before the request was sent.
        case stale
    }

    /// One attempt's outcome on the wire.
    private enum Sent {
        case response(HTTPResponse, [UInt8], ResponseVerdict)
        case transportFailed(any Error)
    }

    let configuration: GateConfiguration
    /// Judges the current credential before a send (the user's `requiresRefresh`, bound to the
    /// gate's clock): `true` refreshes it first. `nil` sends whatever is current.
    private let isStale: (@Sendable (ErasedCredential) -> Bool)?
    let journal: EventJournal<GateEvent>
    let scheduler: PriorityScheduler
    let coalescer = Coalescer<FlightKey>()
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
    private let logger: Logger?
    private let classify: @Sendable (HTTPResponse) -> ResponseVerdict
    private let refresher: @Sendable (ErasedCredential?) async throws -> ErasedCredential
    private let state: Lock<State>
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
        isStale: (@Sendable (ErasedCredential) -> Bool)?,
        refresh: @escaping @Sendable (ErasedCredential?) async throws -> ErasedCredential
    ) {
        self.transport = transport
        self.configuration = configuration
        self.isStale = isStale
        self.cache = cache
        self.clock = clock
        self.requestTimer = DeadlineTimer(clock: clock.purpose(.requestTimeout))
        self.refreshTimer = DeadlineTimer(clock: clock.purpose(.refreshTimeout))
        self.backoffClock = clock.purpose(.gateBackoff)
        self.logger = logger
        self.classify = classify
        let instruments = GateInstruments(configuration.telemetry)
        self.instruments = instruments
        self.refresher = instruments?.traced(refresh) ?? refresh
        self.scheduler = PriorityScheduler(
            validatedMaxConcurrent: configuration.maxConcurrentRequests,
            agingThreshold: configuration.agingThreshold
        )
        self.journal = EventJournal(retention: .newest(configuration.eventRetention))
        let window = configuration.refreshWindow.map { ($0.maxRefreshes, $0.period) }
        let backoff = Backoff(
            initial: configuration.initialBackoff, maximum: configuration.maxBackoff, seed: configuration.jitterSeed)
        self.state = Lock(
            State(machine: Machine(credential: credential, refreshWindow: window, backoff: backoff)),
            nestedLockExemption: "appends to the journal under this lock; goes with the gate's rebuild")
    }

    var credentialVersion: Int { state.withLock { $0.machine.version } }

    // MARK: - Transitions

    /// Runs one transition under the lock, appending the events it produced to the journal in
    /// the same critical section; wakes the journal's readers, logs and records the events
    /// after the lock is released.
    @discardableResult
    private func transition<T>(
        _ body: (inout sending State, inout [GateEvent]) -> sending T
    ) -> sending T {
        let (result, publication) = transitionLeavingPublication(body)
        publish(publication)
        return result
    }

    /// What a transition journaled, to be told once no lock is held: the journal's readers
    /// woken, the user's logger and the instruments handed the events.
    private struct Publication: Sendable {
        var events: [GateEvent]
        var wakeup: EventJournal<GateEvent>.Wakeup?
    }

    /// ``transition(_:)`` for a caller that holds another lock (the coalescer's): the events
    /// are journaled now, in the transitions' order, and told by ``publish(_:)`` later.
    private func transitionLeavingPublication<T>(
        _ body: (inout sending State, inout [GateEvent]) -> sending T
    ) -> sending (result: T, publication: Publication) {
        var events: [GateEvent] = []
        let (result, wakeup, parkedWaiters) = state.withLock { state in
            let result = body(&state, &events)
            // Only while a test waits: one emptiness check otherwise.
            let parkedWaiters =
                state.parkedWaiters.isEmpty ? [] : state.parkedWaiters.takeSatisfied(by: state.machine.parkedCount)
            return (result, events.isEmpty ? nil : journal.append(contentsOf: events), parkedWaiters)
        }
        for waiter in parkedWaiters { waiter.resume() }
        return (result, Publication(events: events, wakeup: wakeup))
    }

    private func publish(_ publication: Publication) {
        guard !publication.events.isEmpty else { return }
        publication.wakeup?.resume()
        if let logger { for event in publication.events { event.log(to: logger) } }
        instruments?.record(publication.events, scheduler: scheduler)
    }

    private func emit(_ event: GateEvent) {
        journal.append(event).resume()
        if let logger { event.log(to: logger) }
        instruments?.record(CollectionOfOne(event), scheduler: scheduler)
    }

    // MARK: - Sending

    func send(
        _ request: HTTPRequest,
        body: RequestBody?,
        priority: PriorityScheduler.Priority,
        coalescingKey: String?,
        timeout: Duration?,
        authorization: RequestAuthorization,
        retry: RequestRetryPolicy,
        trace: GateInstruments.RequestTrace? = nil
    ) async throws(GateError) -> GateResponse {
        let name = Self.name(of: request)
        if let timeout, timeout < .zero { throw .negativeDuration(name, "timeout", timeout) }
        if let attempts = retry.maxAttempts, attempts < 1 {
            throw .invalidConfiguration("RequestRetryPolicy.maxAttempts", attempts, minimum: 1, request: name)
        }
        let timeout = timeout ?? configuration.requestTimeout
        let needsAuthorization = authorization.isRequired
        let id = state.withLock { state in
            defer { state.nextRequestID += 1 }
            return state.nextRequestID
        }
        if let trace { instruments?.register(trace, as: id) }
        // What opening the flight journaled, told once the coalescer has unlocked.
        var opening: Publication?
        do {
            return try await coalescer.run(
                key: coalescingKey.map(FlightKey.coalesced) ?? .request(id),
                priority: priority,
                cancelled: { GateError.cancelled(name) },
                created: { [self] in
                    // Under the coalescer's lock, before any end of the flight can be emitted.
                    let (refused, publication) = transitionLeavingPublication { state, events in
                        let refused = state.machine.open(request: id, needsAuthorization: needsAuthorization)
                        if refused == nil { events.append(.initial(request: id, name: name, priority: priority)) }
                        return refused
                    }
                    if let refused { throw Self.error(refused, name: name) }
                    opening = publication
                },
                started: { if let opening { publish(opening) } },
                joined: { flight in
                    emit(.coalesced(name: name))
                    scheduler.raise(flight, to: priority)
                },
                onSettle: { [weak self] result in self?.settled(id, result) },
                work: { flight in
                    try await self.drive(
                        request, body: body, flight: flight, id: id, name: name, timeout: timeout,
                        needsAuthorization: needsAuthorization, retry: retry)
                }
            )
        } catch let error as GateError where error.code == .shutDown {
            // The flights share one shutdown error; each caller's names its own request.
            throw GateError.shutDown(name)
        } catch let error as GateError {
            throw error
        } catch is CancellationError {
            throw GateError.cancelled(name)
        } catch {
            throw GateError.transport(name, attempts: 0, error)
        }
    }

    private func drive(
        _ request: HTTPRequest,
        body: RequestBody?,
        flight: FlightPriority,
        id: UInt64,
        name: String,
        timeout: Duration?,
        needsAuthorization: Bool,
        retry: RequestRetryPolicy
    ) async throws -> GateResponse {
        let work: @Sendable () async throws -> GateResponse = {
            try await self.attemptUntilSettled(
                request, body: body, flight: flight, id: id, name: name, needsAuthorization: needsAuthorization,
                retry: retry)
        }
        do {
            guard let timeout else { return try await work() }
            let outcome: Result<GateResponse, any Error> = await requestTimer.race(
                {
                    do { return .success(try await work()) } catch { return .failure(error) }
                },
                until: clock.now + timeout,
                onDeadline: { .failure(GateError.timedOut(name, after: timeout)) },
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
        flight: FlightPriority,
        id: UInt64,
        name: String,
        needsAuthorization: Bool,
        retry: RequestRetryPolicy
    ) async throws -> GateResponse {
        let budget = retry.maxAttempts ?? configuration.maxAttempts
        let replayable = body?.isReplayable ?? true
        // Why a failure (an error on the wire, a "retry" verdict) may not be answered by sending
        // again: the server may have carried the request out already.
        let retryRefusal = retry.refusal(for: request)
        var sent = 0
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
            if Task.isCancelled { throw GateError.cancelled(name) }
            let epoch = state.withLock { $0.machine.failureEpoch }
            let slot: PriorityScheduler.Priority
            do {
                slot = try await scheduler.acquireSlot(flight: flight) { [self] priority in
                    emit(.queued(request: id, priority: priority))
                }
            } catch is CancellationError {
                throw GateError.cancelled(name)
            } catch {
                throw GateError.shutDown(name)
            }
            let credential: ErasedCredential?
            let version: Int
            switch await authorizeOrPark(
                id: id, attempt: sent + 1, epoch: epoch, needsAuthorization: needsAuthorization, slot: slot,
                refreshedStale: &refreshedStale)
            {
            case .send(let current, let currentVersion):
                credential = current
                version = currentVersion
                sent += 1
            case .failNow(let failure):
                scheduler.releaseSlot(slot)
                throw Self.error(failure, name: name, status: lastStatus)
            case .cancelledNow:
                scheduler.releaseSlot(slot)
                throw GateError.cancelled(name)
            case .proceed:
                continue
            case .fail(let failure):
                throw Self.error(failure, name: name, status: lastStatus)
            case .cancelled:
                throw GateError.cancelled(name)
            }

            let outcome = await sendOnce(request, body: body, credential: credential)
            if case .response(let response, _, .credentialExpired) = outcome, needsAuthorization {
                lastStatus = response.status.code
                // The slot is released only after the rejection's transition (inside
                // `rejected`): the request that takes it next already sees the refresh. A
                // rejected credential means the server did nothing, so the request is sent
                // again whatever its retry policy, within its budget.
                let last = "credential v\(version) rejected"
                guard sent < budget, replayable else {
                    // Still decide the refresh this rejection calls for, then give up — with the
                    // more specific cause when that decision refused the refresh.
                    if case .fail(let failure) = await rejected(
                        id: id, version: version, slot: slot, waits: false, reason: .rejected)
                    {
                        throw Self.error(failure, name: name, status: lastStatus)
                    }
                    try mayResend(last)
                    continue
                }
                switch await rejected(id: id, version: version, slot: slot, waits: true, reason: .rejected) {
                case .proceed, .send: continue
                case .fail(let failure), .failNow(let failure):
                    throw Self.error(failure, name: name, status: lastStatus)
                case .cancelled, .cancelledNow: throw GateError.cancelled(name)
                }
            }
            scheduler.releaseSlot(slot)

            switch outcome {
            case .response(let response, let bytes, let verdict):
                let status = response.status.code
                lastStatus = status
                switch verdict {
                case .success:
                    let reply = GateResponse(response: response, body: bytes)
                    await cache?.store(reply, for: request)
                    return reply
                case .retry:
                    if let retryRefusal {
                        throw GateError.retriesExhausted(
                            name, attempts: sent, last: "status \(status); \(retryRefusal)", status: status)
                    }
                    try mayResend("status \(status)")
                    try await backOff(
                        id: id, attempt: sent, name: name, retryAfter: retryAfter(in: response), status: status)
                default:
                    throw GateError.rejected(name, status: status)
                }

            case .transportFailed(let error):
                if error is CancellationError || Task.isCancelled { throw GateError.cancelled(name) }
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
                    throw GateError.transport(name, attempts: sent, error, why: why, status: lastStatus)
                }
                try await backOff(id: id, attempt: sent, name: name, retryAfter: nil, status: lastStatus)
            }
        }
    }

    /// The request holds slot `slot`. Either it may send now (keeping the slot), or it parks
    /// behind the refresh (releasing the slot) until the refresh ends.
    ///
    /// With a `requiresRefresh` judge, the credential the request would send is judged first,
    /// outside the lock (it is user code), and the send is confirmed in a second transition
    /// only if the judged version is still current; a stale one starts the refresh as a
    /// rejection would, and the request parks behind it.
    private func authorizeOrPark(
        id: UInt64, attempt: Int, epoch: Int, needsAuthorization: Bool, slot: PriorityScheduler.Priority,
        refreshedStale: inout Bool
    ) async -> Resumption {
        // Most attempts send (or fail) at once: decided first without the continuation and the
        // cancellation handler that only parking needs.
        var judged: (version: Int, stale: Bool)?
        let judges = isStale != nil && !refreshedStale
        while true {
            let look = transition { state, events -> FirstLook? in
                if Task.isCancelled { return .resume(.cancelledNow) }
                guard
                    let action = state.machine.authorizeWithoutParking(
                        epoch: epoch, needsAuthorization: needsAuthorization)
                else { return nil }
                if judges, case .send(let credential?, let version) = action {
                    guard let judged, judged.version == version else { return .judge(credential, version: version) }
                    if judged.stale { return .stale(version: version) }
                }
                return .resume(Self.resumption(unparked: action, request: id, attempt: attempt, events: &events))
            }
            switch look {
            case .resume(let resumption):
                return resumption
            case .judge(let credential, let version):
                judged = (version, isStale?(credential) ?? false)
            case .stale(let version):
                refreshedStale = true
                return await rejected(id: id, version: version, slot: slot, waits: true, reason: .stale)
            case nil:
                return await park(
                    id: id, attempt: attempt, epoch: epoch, needsAuthorization: needsAuthorization, slot: slot)
            }
        }
    }

    /// Parks a request that found a refresh running, or no credential yet (the first request
    /// then starts the refresh), releasing its slot; unless the state changed since the first
    /// look, and it may send or must fail after all.
    private func park(
        id: UInt64, attempt: Int, epoch: Int, needsAuthorization: Bool, slot: PriorityScheduler.Priority
    ) async -> Resumption {
        let now = clock.now
        return await suspend(id: id, releasing: slot, when: .parked) { state, events, continuation -> Next in
            let action = state.machine.authorize(
                request: id, epoch: epoch, needsAuthorization: needsAuthorization, waiter: continuation, now: now)
            switch action {
            case .send, .fail:
                // The state changed since the first look (a refresh ended, a sign-in). A
                // credential that came meanwhile is sent unjudged: it is the one the refresh or
                // the sign-in just delivered.
                return .resume(Self.resumption(unparked: action, request: id, attempt: attempt, events: &events))
            case .park:
                events.append(.parked(request: id, credentialVersion: state.machine.version))
                return .parked(start: nil)
            case .parkAndRefresh(let flight, let old):
                events.append(.refreshStarted(fromVersion: flight.fromVersion, request: id))
                events.append(.parked(request: id, credentialVersion: state.machine.version))
                return .parked(start: RefreshStart(flight: flight, old: old))
            }
        }
    }

    /// When a suspended request gives its slot back.
    private enum SlotRelease {
        /// Once the transition is over, whatever it decided (a rejected request's slot).
        case always
        /// Only if the transition parked the request; otherwise it goes on holding it.
        case parked
    }

    /// Runs `decide`, one transition, with a continuation for the calling request, and carries
    /// out what it decided once the lock is released: gives `slot` back (see ``SlotRelease``),
    /// starts the refresh the transition decided, and resumes the request at once unless it
    /// parked. A cancellation is decided under the same lock: either the transition sees it
    /// (`Task.isCancelled`, checked first) or the cancellation handler finds the request parked
    /// and resumes it with `.cancelled`.
    private func suspend(
        id: UInt64,
        releasing slot: PriorityScheduler.Priority?,
        when release: SlotRelease,
        _ decide: (inout State, inout [GateEvent], CheckedContinuation<Resumption, Never>) -> Next
    ) async -> Resumption {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Resumption, Never>) in
                let next = transition { state, events -> Next in
                    if Task.isCancelled {
                        return .resume(slot != nil && release == .parked ? .cancelledNow : .cancelled)
                    }
                    return decide(&state, &events, continuation)
                }
                if let slot {
                    switch (release, next) {
                    case (.always, _), (.parked, .parked): scheduler.releaseSlot(slot)
                    case (.parked, _): break
                    }
                }
                switch next {
                case .resume(let resumption):
                    continuation.resume(returning: resumption)
                case .resumeAndRefresh(let resumption, let start):
                    startRefresh(start.flight, replacing: start.old)
                    continuation.resume(returning: resumption)
                case .parked(let start):
                    if let start { startRefresh(start.flight, replacing: start.old) }
                }
            }
        } onCancel: {
            let waiter = state.withLock { $0.machine.cancelParked(request: id) }
            waiter?.resume(returning: .cancelled)
        }
    }

    /// How a request goes on after an `authorize` that did not park it (`send` or `fail`), and
    /// the events that records.
    private static func resumption(
        unparked action: Machine.AuthorizeAction, request id: UInt64, attempt: Int, events: inout [GateEvent]
    ) -> Resumption {
        switch action {
        case .send(let credential, let version):
            // Recorded in the transition, so the journal never shows a send with a version
            // after the `refreshStarted` that replaces it. A request without authorization
            // carries no credential: version 0.
            events.append(.running(request: id, attempt: attempt, credentialVersion: credential == nil ? 0 : version))
            return .send(credential, version: version)
        case .fail(let failure):
            recordRefusal(failure, events: &events)
            return .failNow(failure)
        case .park, .parkAndRefresh:
            preconditionFailure("a parking decision has no resumption yet")
        }
    }

    /// The server rejected credential `version` of request `id` (or it was judged stale before
    /// sending: `reason`), which still holds `slot`;
    /// the slot is released right after the transition. With `waits`, the request parks if a
    /// refresh runs or starts; without, it only starts the refresh the rejection calls for.
    private func rejected(
        id: UInt64, version: Int, slot: PriorityScheduler.Priority, waits: Bool, reason: ParkReason
    ) async -> Resumption {
        let parkedEvent: GateEvent =
            switch reason {
            case .rejected: .redirect(request: id, credentialVersion: version)
            case .stale: .parked(request: id, credentialVersion: version)
            }
        let now = clock.now
        return await suspend(id: id, releasing: slot, when: .always) { state, events, continuation -> Next in
            switch state.machine.rejected(
                request: id, sentVersion: version, waiter: waits ? continuation : nil, now: now,
                judgedStale: reason == .stale)
            {
            case .resend: return .resume(.proceed)
            case .fail(let failure):
                Self.recordRefusal(failure, events: &events)
                return .resume(.fail(failure))
            case .park:
                guard waits else { return .resume(.proceed) }
                events.append(parkedEvent)
                return .parked(start: nil)
            case .parkAndRefresh(let flight, let old):
                events.append(.refreshStarted(fromVersion: flight.fromVersion, request: id))
                guard waits else {
                    return .resumeAndRefresh(.proceed, start: RefreshStart(flight: flight, old: old))
                }
                events.append(parkedEvent)
                return .parked(start: RefreshStart(flight: flight, old: old))
            }
        }
    }

    private static func recordRefusal(_ failure: Failure, events: inout [GateEvent]) {
        if case .refreshWindowExceeded(let refreshes, let period) = failure {
            events.append(.refreshWindowExceeded(refreshes: refreshes, period: period))
        }
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

    private func backOff(
        id: UInt64,
        attempt: Int,
        name: String,
        retryAfter: Duration?,
        status: Int?
    ) async throws {
        if let retryAfter, retryAfter > configuration.maxRetryAfter {
            throw GateError.retriesExhausted(
                name,
                attempts: attempt,
                last: "Retry-After \(retryAfter) exceeds the cap of \(configuration.maxRetryAfter)",
                status: status
            )
        }
        let delay = retryAfter ?? state.withLock { $0.machine.backoffDelay(afterAttempt: attempt) }
        emit(.retry(request: id, attempt: attempt, delay: delay))
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
    /// request is authorized with the old credential any more. The refresh still runs as the
    /// scheduler's `unique` job: it waits for the attempts already authorized with the old
    /// credential to come back from the wire, so the server never sees the old credential
    /// after it issued the new one. No parked request holds a slot, so this cannot deadlock.
    /// The deadline counts from the moment the refresh has the slot.
    private func startRefresh(_ flight: Flight, replacing old: ErasedCredential?) {
        let refresher = self.refresher
        let timeout = configuration.refreshTimeout
        let timer = refreshTimer
        let task = Task {
            let outcome: RefreshOutcome
            do {
                outcome = try await self.scheduler.run(priority: .unique) {
                    await timer.race(
                        {
                            do { return .finished(.success(try await refresher(old))) } catch {
                                return .finished(.failure(error))
                            }
                        },
                        until: timer.clock.now + timeout,
                        onDeadline: { .deadlineMissed },
                        onCancel: { .cancelled }
                    )
                }
            } catch {
                // Cancelled or shut down while waiting for the slot: whatever did it has
                // already replaced this refresh.
                outcome = .cancelled
            }
            self.finishRefresh(flight, outcome, timeout: timeout)
        }
        let current = state.withLock { state -> Bool in
            guard case .refreshing(flight) = state.machine.refresh else { return false }
            state.refreshTask = (flight.id, task)
            return true
        }
        // A sign-in, sign-out or shutdown replaced the refresh before its task was recorded.
        if !current { task.cancel() }
    }

    private func finishRefresh(_ flight: Flight, _ outcome: RefreshOutcome, timeout: Duration) {
        let action = transition { state, events -> Machine.RefreshEndAction in
            let action: Machine.RefreshEndAction
            switch outcome {
            case .finished(.success(let credential)):
                action = state.machine.refreshSucceeded(flight, with: credential)
            case .finished(.failure(let error)):
                action = state.machine.refreshFailed(flight, .refreshFailed(RefreshError(error: error)))
            case .deadlineMissed:
                action = state.machine.refreshFailed(flight, .refreshTimedOut(after: timeout))
            case .cancelled:
                // Only a sign-in, sign-out or shutdown cancels the refresh, and each has
                // already replaced it.
                action = .discard
            }
            if case .settle(_, let version, let failure) = action {
                if state.refreshTask?.id == flight.id { state.refreshTask = nil }
                if failure != nil {
                    events.append(.refreshFailed(fromVersion: flight.fromVersion))
                } else {
                    events.append(.refreshSucceeded(version: version))
                }
            }
            return action
        }
        guard case .settle(let waiters, _, let failure) = action else { return }
        let resumption: Resumption = failure.map { .fail($0) } ?? .proceed
        for waiter in waiters { waiter.resume(returning: resumption) }
    }

    // MARK: - Credentials from outside

    /// Starts a refresh now, or joins the running one, and returns the credential version
    /// current when it ended.
    func refreshNow() async throws(GateError) -> Int {
        let id = state.withLock { state in
            defer { state.nextRequestID += 1 }
            return state.nextRequestID
        }
        let now = clock.now
        let resumption = await suspend(id: id, releasing: nil, when: .always) { state, events, continuation -> Next in
            switch state.machine.refreshNow(caller: id, waiter: continuation, now: now) {
            case .join:
                return .parked(start: nil)
            case .start(let flight, let old):
                events.append(.refreshStarted(fromVersion: flight.fromVersion, request: nil))
                return .parked(start: RefreshStart(flight: flight, old: old))
            case .fail(let failure):
                Self.recordRefusal(failure, events: &events)
                return .resume(.fail(failure))
            }
        }
        switch resumption {
        case .send(_, let version): return version
        case .proceed: return credentialVersion
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
    /// the wire and the running refresh), refuses new ones, and finishes the journal.
    func shutdown() {
        coalescer.shutdown(with: GateError.shutDown(nil))
        replace(.shutdown)
        scheduler.shutdown()
        journal.finish().resume()
    }

    private enum Replacement {
        case signIn(ErasedCredential)
        case signOut
        case shutdown
    }

    private func replace(_ replacement: Replacement) {
        let (action, task) = transition { state, events -> (Machine.ReplaceAction?, Task<Void, Never>?) in
            let action: Machine.ReplaceAction?
            let event: GateEvent?
            switch replacement {
            case .signIn(let credential):
                action = state.machine.signIn(credential)
                event = action.map { .signedIn(version: $0.version) }
            case .signOut:
                action = state.machine.signOut()
                event = .signedOut
            case .shutdown:
                action = state.machine.shutdown()
                event = nil
            }
            guard let action else { return (nil, nil) }
            var task: Task<Void, Never>?
            if let cancelled = action.cancelledRefresh {
                events.append(.refreshCancelled(fromVersion: cancelled.fromVersion))
                if state.refreshTask?.id == cancelled.id { task = state.refreshTask?.task }
                state.refreshTask = nil
            }
            if let event { events.append(event) }
            return (action, task)
        }
        task?.cancel()
        guard let action else { return }
        let resumption: Resumption = action.failure.map { .fail($0) } ?? .proceed
        for waiter in action.waiters { waiter.resume(returning: resumption) }
    }

    /// How a refresh ended, as its race against the refresh deadline saw it.
    private enum RefreshOutcome: Sendable {
        case finished(Result<ErasedCredential, any Error>)
        case deadlineMissed
        /// The refresh task was cancelled (a sign-in, sign-out or shutdown replaced it).
        case cancelled
    }

    // MARK: - Events

    private func settled(_ id: UInt64, _ result: Result<GateResponse, any Error>) {
        let end: GateEvent
        switch result {
        case .success(let reply) where reply.isFromCache: end = .useCache(request: id)
        case .success(let reply): end = .success(request: id, status: reply.response.status.code)
        case .failure(let error): end = .failure(request: id, code: (error as? GateError)?.code ?? .cancelled)
        }
        transition { state, events in
            // Exactly one end per opened flight, whatever path ended it.
            if state.machine.close(request: id) { events.append(end) }
        }
    }

    /// For the test hook ``RequestGate/parkedRequests(atLeast:)``: here, because the waiters
    /// live in the storage's private state.
    func parkedRequests(atLeast count: Int) async {
        await state.wait(untilCountOf: { $0.machine.parkedCount }, reaches: count, waiters: \.parkedWaiters)
    }

    /// Method and path without the query, where tokens sometimes hide.
    static func name(of request: HTTPRequest) -> String {
        let path = request.path ?? "/"
        let query = path.firstIndex(of: "?") ?? path.endIndex
        return request.method.rawValue + " " + path[..<query]
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
