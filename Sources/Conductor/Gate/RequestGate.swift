public import HTTPTypes
public import Logging
import Synchronization

/// Sends HTTP requests in priority order through one credential that may expire at any
/// moment, refreshing it once however many requests notice.
///
/// ```swift
/// let gate = RequestGate<String>(
///     transport: URLSessionTransport(),
///     authorize: { request, token in request.headerFields[.authorization] = "Bearer \(token)" },
///     refresh: { _ in try await auth.fetchToken() }   // must not go through this gate
/// )
/// let feed = try await gate.send(HTTPRequest(method: .get, scheme: "https", authority: host, path: "/feed"),
///                                priority: .high)
/// ```
///
/// Each request runs as one job per attempt on a ``PriorityScheduler``; the refresh runs as
/// its `unique` job, so it waits for requests already on the wire, runs alone, and every
/// request queued meanwhile goes out with the new credential. A request rejected for its
/// credential (the ``ResponseVerdict/credentialExpired`` verdict) is parked without holding a
/// slot; a rejection of a credential that has since been replaced is simply sent again. When
/// the refresh fails, every request parked or queued behind it fails once with
/// ``GateError/Code/refreshFailed`` and nothing goes out again with the old credential.
///
/// Retries share one budget per request (``GateConfiguration/maxAttempts``), back off
/// exponentially with jitter, honour `Retry-After` up to a cap, and never replay a streamed body.
public final class RequestGate<Credential: Sendable>: Sendable {
    private typealias Priority = PriorityScheduler.Priority

    private enum RefreshOutcome: Sendable {
        case refreshed(version: Int)
        case failed(reason: String)
    }

    private enum FlightKey: Hashable, Sendable {
        case request(UInt64)
        case coalesced(String)
    }

    private struct State {
        var credentials: CredentialStateMachine<Credential>
        var refresh: OnceCell<RefreshOutcome>?
        var backoff: Backoff
        var nextRequestID: UInt64 = 0
    }

    /// What one attempt, run in a scheduler slot, came to.
    private enum Attempt {
        /// A refresh failed while the request waited for its turn.
        case doomed(reason: String)
        case response(HTTPResponse, [UInt8], ResponseVerdict, sentVersion: Int)
        /// Rejected for the credential (or there was none yet); already recorded in the state.
        case resend(sentVersion: Int, counted: Bool)
        case awaitRefresh(OnceCell<RefreshOutcome>, sentVersion: Int, counted: Bool)
        case transportFailed(any Error)
    }

    private let transport: any GateTransport
    private let configuration: GateConfiguration
    private let cache: (any ResponseCache)?
    private let clock: ClockSource
    private let logger: Logger?
    private let authorize: @Sendable (inout HTTPRequest, Credential) -> Void
    private let classify: @Sendable (HTTPResponse) -> ResponseVerdict
    private let refresher: @Sendable (Credential?) async throws -> Credential
    private let scheduler: PriorityScheduler
    private let coalescer = Coalescer()
    private let journal: EventJournal<GateEvent>
    private let state: Lock<State>

    /// Creates a gate.
    ///
    /// - Parameters:
    ///   - transport: sends the requests.
    ///   - credential: the credential to start with; `nil` makes the first request refresh.
    ///   - cache: where successful responses are kept for the "use cache" fallback.
    ///   - logger: receives every event at debug level; nothing is logged without one.
    ///   - authorize: adds the credential to a request (the seed's "build header"); runs
    ///     for every attempt, with the credential current when the attempt starts.
    ///   - classify: reads a response; ``ResponseVerdict/standard(for:)`` by default.
    ///   - refresh: fetches a new credential, given the one being replaced. It runs alone,
    ///     within ``GateConfiguration/refreshTimeout``, and must not send through this gate.
    public init(
        transport: some GateTransport,
        credential: Credential? = nil,
        configuration: GateConfiguration = GateConfiguration(),
        cache: (any ResponseCache)? = nil,
        clock: some Clock<Duration> = ContinuousClock(),
        logger: Logger? = nil,
        authorize: @escaping @Sendable (inout HTTPRequest, Credential) -> Void,
        classify: @escaping @Sendable (HTTPResponse) -> ResponseVerdict = ResponseVerdict.standard(for:),
        refresh: @escaping @Sendable (Credential?) async throws -> Credential
    ) {
        self.transport = transport
        self.configuration = configuration
        self.cache = cache
        self.clock = ClockSource(clock)
        self.logger = logger
        self.authorize = authorize
        self.classify = classify
        self.refresher = refresh
        self.scheduler = PriorityScheduler(
            maxConcurrent: configuration.maxConcurrentRequests,
            agingThreshold: configuration.agingThreshold
        )
        self.journal = EventJournal(retention: .newest(max(1, configuration.eventRetention)))
        self.state = Lock(
            State(
                credentials: CredentialStateMachine(credential: credential),
                backoff: Backoff(
                    initial: configuration.initialBackoff,
                    maximum: configuration.maxBackoff,
                    seed: configuration.jitterSeed
                )
            )
        )
    }

    /// The gate's events, starting with the oldest one still retained.
    public var events: EventSequence<GateEvent> { EventSequence(journal: journal, startIndex: 0) }

    /// The version of the current credential: 0 before the first, plus one per successful refresh.
    public var credentialVersion: Int { state.withLock { $0.credentials.version } }

    /// Sends `request` and returns the response the business code classified as a success
    /// (or, after a network failure, a cached one).
    ///
    /// - Parameters:
    ///   - body: the body; a ``RequestBody/stream(_:)`` body is never sent twice.
    ///   - priority: the request's lane; `.unique` makes it run alone.
    ///   - coalescingKey: requests with an equal key share one flight while it lasts.
    ///   - timeout: how long the request may take in all, from this call on, measured on the
    ///     gate's clock; `nil` uses ``GateConfiguration/requestTimeout``. A shared flight keeps
    ///     the deadline of the request that started it.
    /// - Throws: ``GateError``; cancelling the calling task ends the call at once with
    ///   ``GateError/Code/cancelled`` (a shared flight goes on for its other callers).
    public func send(
        _ request: HTTPRequest,
        body: RequestBody? = nil,
        priority: PriorityScheduler.Priority = .default,
        coalescingKey: String? = nil,
        timeout: Duration? = nil
    ) async throws(GateError) -> GateResponse {
        let name = Self.name(of: request)
        let timeout = timeout ?? configuration.requestTimeout
        let id = state.withLock { state in
            defer { state.nextRequestID += 1 }
            return state.nextRequestID
        }
        do {
            return try await coalescer.run(
                key: coalescingKey.map(FlightKey.coalesced) ?? .request(id),
                priority: priority,
                cancelled: { GateError.cancelled(name) },
                joined: { flight in
                    emit(.coalesced(name: name))
                    scheduler.raise(flight, to: priority)
                },
                onSettle: { [weak self] result in self?.settled(id, result) },
                work: { flight in
                    self.emit(.initial(request: id, name: name, priority: priority))
                    return try await self.drive(
                        request, body: body, priority: flight, id: id, name: name, timeout: timeout)
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

    /// Ends every pending request once with ``GateError/Code/shutDown`` (cancelling what is on
    /// the wire), refuses new ones, and finishes ``events``.
    public func shutdown() {
        coalescer.shutdown(with: GateError.shutDown(nil))
        scheduler.shutdown()
        journal.finish().resume()
    }

    // MARK: - The request's life

    private func drive(
        _ request: HTTPRequest,
        body: RequestBody?,
        priority: FlightPriority,
        id: UInt64,
        name: String,
        timeout: Duration?
    ) async throws -> GateResponse {
        do {
            guard let timeout else {
                return try await attemptUntilSettled(request, body: body, priority: priority, id: id, name: name)
            }
            return try await within(timeout, name: name) {
                try await self.attemptUntilSettled(request, body: body, priority: priority, id: id, name: name)
            }
        } catch let error as GateError where [.transport, .retriesExhausted, .timedOut].contains(error.code) {
            guard let cache, var cached = await cache.response(for: request) else { throw error }
            cached.isFromCache = true
            return cached
        }
    }

    /// Runs `work` against a deadline on the gate's clock. The work runs in a task of its own
    /// and the deadline ends the wait through one `OnceCell`, so a transport that ignores
    /// cancellation cannot hold the request past its deadline (it only keeps its slot until
    /// it returns). Two tasks per request, and only for requests that have a timeout.
    private func within(
        _ timeout: Duration,
        name: String,
        _ work: @escaping @Sendable () async throws -> GateResponse
    ) async throws -> GateResponse {
        let outcome = OnceCell<Result<GateResponse, any Error>>()
        let deadline = clock.now + timeout
        let worker = Task {
            do { outcome.resolve(.success(try await work())) } catch { outcome.resolve(.failure(error)) }
        }
        let timer = Task { [clock] in
            guard (try? await clock.sleep(until: deadline)) != nil else { return }
            outcome.resolve(.failure(GateError.timedOut(name, after: timeout)))
        }
        let result = await withTaskCancellationHandler {
            await outcome.waitIgnoringCancellation()
        } onCancel: {
            outcome.resolve(.failure(GateError.cancelled(name)))
        }
        worker.cancel()
        timer.cancel()
        return try result.get()
    }

    private func attemptUntilSettled(
        _ request: HTTPRequest,
        body: RequestBody?,
        priority: FlightPriority,
        id: UInt64,
        name: String
    ) async throws -> GateResponse {
        let budget = configuration.maxAttempts
        let replayable = body?.isReplayable ?? true
        var sent = 0
        while true {
            if Task.isCancelled { throw GateError.cancelled(name) }
            let epoch = state.withLock { $0.credentials.failureEpoch }
            let attempt: Attempt
            do {
                attempt = try await scheduler.run(priority: priority) {
                    await self.attempt(request, body: body, id: id, epoch: epoch, sent: &sent)
                }
            } catch is CancellationError {
                throw GateError.cancelled(name)
            } catch let error as GateError where error.code == .shutDown {
                throw GateError.shutDown(name)
            }

            /// Whether one more send is allowed; throws the error that ends the request if not.
            func mayResend(_ last: @autoclosure () -> String, status: Int?) throws {
                guard sent < budget else {
                    throw GateError.retriesExhausted(name, attempts: sent, last: last(), status: status)
                }
                guard replayable || sent == 0 else { throw GateError.bodyNotReplayable(name, status: status) }
            }

            switch attempt {
            case .doomed(let reason):
                throw GateError.refreshFailed(name, reason)

            case .resend(let version, let counted):
                if counted { try mayResend("credential v\(version) rejected", status: 401) }

            case .awaitRefresh(let refresh, let version, let counted):
                if counted { try mayResend("credential v\(version) rejected", status: 401) }
                emit(.redirect(request: id, credentialVersion: version))
                guard let outcome = await refresh.wait() else { throw GateError.cancelled(name) }
                if case .failed(let reason) = outcome { throw GateError.refreshFailed(name, reason) }

            case .response(let response, let bytes, let verdict, _):
                let status = response.status.code
                switch verdict {
                case .success:
                    let reply = GateResponse(response: response, body: bytes)
                    await cache?.store(reply, for: request)
                    return reply
                case .retry:
                    try mayResend("status \(status)", status: status)
                    try await backOff(
                        id: id, attempt: sent, name: name, retryAfter: retryAfter(in: response), status: status)
                default:
                    throw GateError.rejected(name, status: status)
                }

            case .transportFailed(let error):
                if error is CancellationError || Task.isCancelled { throw GateError.cancelled(name) }
                guard sent < budget, replayable else { throw GateError.transport(name, attempts: sent, error) }
                try await backOff(id: id, attempt: sent, name: name, retryAfter: nil, status: nil)
            }
        }
    }

    /// One attempt, run while holding a scheduler slot, so a refresh cannot start between
    /// the rejection and its recording.
    private func attempt(
        _ request: HTTPRequest,
        body: RequestBody?,
        id: UInt64,
        epoch: Int,
        sent: inout Int
    ) async -> Attempt {
        let snapshot = state.withLock { state in
            (
                state.credentials.credential, state.credentials.version, state.credentials.failureEpoch,
                state.credentials.lastFailure
            )
        }
        let (credential, version, currentEpoch, lastFailure) = snapshot
        if currentEpoch > epoch { return .doomed(reason: lastFailure ?? "unknown") }
        guard let credential else { return rejected(sentVersion: version, counted: false) }
        sent += 1
        emit(.running(request: id, attempt: sent, credentialVersion: version))
        var authorized = request
        authorize(&authorized, credential)
        let response: HTTPResponse
        let bytes: [UInt8]
        do {
            (response, bytes) = try await transport.send(authorized, body: body)
        } catch {
            return .transportFailed(error)
        }
        let verdict = classify(response)
        if verdict == .credentialExpired { return rejected(sentVersion: version, counted: true) }
        return .response(response, bytes, verdict, sentVersion: version)
    }

    private func rejected(sentVersion: Int, counted: Bool) -> Attempt {
        let (action, refresh) = state.withLock {
            state -> (CredentialStateMachine<Credential>.RejectionAction, OnceCell<RefreshOutcome>?) in
            let action = state.credentials.rejected(sentVersion: sentVersion)
            if action == .startRefresh { state.refresh = OnceCell() }
            return (action, state.refresh)
        }
        switch action {
        case .resend:
            return .resend(sentVersion: sentVersion, counted: counted)
        case .awaitRefresh:
            return .awaitRefresh(refresh!, sentVersion: sentVersion, counted: counted)
        case .startRefresh:
            startRefresh(replacing: sentVersion, outcome: refresh!)
            return .awaitRefresh(refresh!, sentVersion: sentVersion, counted: counted)
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
        let delay = retryAfter ?? state.withLock { $0.backoff.delay(afterAttempt: attempt) }
        emit(.retry(request: id, attempt: attempt, delay: delay))
        do {
            try await clock.sleep(for: delay)
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

    /// Runs the one refresh as the scheduler's unique job, in a task of its own so that no
    /// waiting request owns it: a cancelled waiter leaves, the refresh goes on for the others.
    private func startRefresh(replacing version: Int, outcome: OnceCell<RefreshOutcome>) {
        emit(.refreshStarted(fromVersion: version))
        Task {
            let result: RefreshOutcome
            do {
                result = try await scheduler.run(priority: .unique) { await self.refreshInSlot() }
            } catch {
                result = finishRefresh(.failed(reason: "the gate was shut down"))
            }
            switch result {
            case .refreshed(let version): emit(.refreshSucceeded(version: version))
            case .failed: emit(.refreshFailed(fromVersion: version))
            }
            outcome.resolve(result)
        }
    }

    /// Fetches the credential within the deadline and records it before the slot is released,
    /// so every request that starts after the refresh carries the new credential.
    private func refreshInSlot() async -> RefreshOutcome {
        let current = state.withLock { $0.credentials.credential }
        let fetched = OnceCell<Result<Credential, RefreshFailure>>()
        let refresher = self.refresher
        let fetch = Task {
            do {
                fetched.resolve(.success(try await refresher(current)))
            } catch {
                fetched.resolve(.failure(RefreshFailure(reason: "\(error)")))
            }
        }
        let timeout = configuration.refreshTimeout
        let timer = Task { [clock] in
            guard (try? await clock.sleep(for: timeout)) != nil else { return }
            fetched.resolve(.failure(RefreshFailure(reason: "no credential within \(timeout)")))
        }
        let result = await fetched.waitIgnoringCancellation()
        fetch.cancel()
        timer.cancel()
        switch result {
        case .success(let credential):
            let version = state.withLock { $0.credentials.refreshSucceeded(with: credential) }
            state.withLock { $0.refresh = nil }
            return .refreshed(version: version)
        case .failure(let failure):
            return finishRefresh(.failed(reason: failure.reason))
        }
    }

    private func finishRefresh(_ outcome: RefreshOutcome) -> RefreshOutcome {
        state.withLock { state in
            switch outcome {
            case .refreshed: break
            case .failed(let reason): state.credentials.refreshFailed(reason: reason)
            }
            state.refresh = nil
        }
        return outcome
    }

    // MARK: - Events

    private func settled(_ id: UInt64, _ result: Result<GateResponse, any Error>) {
        switch result {
        case .success(let reply) where reply.isFromCache: emit(.useCache(request: id))
        case .success(let reply): emit(.success(request: id, status: reply.response.status.code))
        case .failure(let error): emit(.failure(request: id, code: (error as? GateError)?.code ?? .cancelled))
        }
    }

    private func emit(_ event: GateEvent) {
        journal.append(event).resume()
        logger?.debug("\(event.description)")
    }

    /// Method and path without the query, where tokens sometimes hide.
    static func name(of request: HTTPRequest) -> String {
        let path = request.path ?? "/"
        let trimmed = path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return "\(request.method.rawValue) \(trimmed)"
    }
}

extension RequestGate {
    /// Test hook: suspends until at least `count` attempts wait for a slot.
    package func queuedAttempts(atLeast count: Int) async {
        await scheduler.queued(atLeast: count)
    }

    /// Test hook: suspends until no attempt and no refresh runs or waits for a slot.
    package func whenIdle() async throws {
        try await scheduler.whenIdle()
    }

    /// Test hook: the retained events, oldest first.
    package var eventsSnapshot: [GateEvent] { journal.snapshot }
}

private struct RefreshFailure: Error {
    var reason: String
}
