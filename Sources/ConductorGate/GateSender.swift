import HTTPTypes
import Logging

/// What a ``RequestGate``'s requests share besides its storage — the transport, the cache,
/// the clocks, the judge — and the two ways in that need them: ``send(_:body:priority:coalescingKey:timeout:authorization:retry:metadata:trace:)``,
/// which opens (or joins) a flight whose task runs a ``GateRequest``, and ``refreshNow()``.
///
/// Not generic, for the reason the storage is not (see ``GateStorage``).
final class GateSender: Sendable {
    typealias Priority = RequestPriority

    let storage: GateStorage
    let configuration: GateConfiguration
    /// Whether the user's `requiresRefresh` judges credentials before a send.
    let judges: Bool
    let transport: any GateTransport
    let cache: (any ResponseCache)?
    /// Where a request that names only a path goes (``GateConfiguration/baseURL``).
    let baseURL: GateBaseURL?
    /// Read for `now` (refresh window, deadlines); the gate sleeps only through its timers and
    /// the backoff clock, each tagged with its purpose so a test clock tells them apart.
    let clock: ClockSource
    /// Requests' timeouts: one timer task at most, however many requests have a deadline.
    let requestTimer: DeadlineTimer
    /// Sleeps between a request's attempts.
    let backoffClock: ClockSource
    let classify: @Sendable (HTTPResponse) -> ResponseVerdict
    /// The gate's request ids, 0 up, drawn without the lock (a caller who joins a flight draws
    /// one too, as does a ``RequestGate/refresh()`` caller).
    private let requestIDs = AtomicCounter()

    var instruments: GateInstruments? { storage.instruments }
    var requestLog: GateRequestLog? { storage.requestLog }

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
        self.baseURL = configuration.baseURL.flatMap(GateBaseURL.init)
        self.clock = clock
        // Requests follow each other: the timer task sleeps on between them (ended in deinit).
        self.requestTimer = DeadlineTimer(clock: clock.purpose(.requestTimeout), keepsIdleTimer: true)
        self.backoffClock = clock.purpose(.gateBackoff)
        self.classify = classify
        let instruments = GateInstruments(configuration.telemetry, clock: clock)
        let window = configuration.refreshWindow.map { ($0.maxRefreshes, $0.period) }
        let machine = GateStorage.Machine(
            credentials: GateStorage.Machine.Credentials(
                credential: credential, refreshWindow: window, jitterSeed: configuration.jitterSeed),
            slots: SchedulerStateMachine(
                limit: configuration.maxConcurrentRequests, agingThreshold: configuration.agingThreshold))
        self.storage = GateStorage(
            machine: machine, eventRetention: configuration.eventRetention, requestLog: logger.map(GateRequestLog.init),
            instruments: instruments,
            refreshRunner: GateRefreshRunner(
                refresher: instruments?.traced(refresh) ?? refresh,
                timer: DeadlineTimer(clock: clock.purpose(.refreshTimeout)), timeout: configuration.refreshTimeout))
    }

    deinit {
        // The request timer's task may sleep on with nothing pending: it ends with the gate.
        requestTimer.cancelAll()
    }

    /// Sends `request` through the gate: validates it, then opens its flight (or joins the one
    /// `coalescingKey` names) and waits for the flight's outcome.
    func send(
        _ request: HTTPRequest,
        body: GateRequestBody?,
        priority: Priority,
        coalescingKey: String?,
        timeout: Duration?,
        authorization: RequestAuthorization,
        retry: RequestRetryPolicy?,
        metadata: Logger.Metadata = [:],
        trace: GateInstruments.RequestTrace? = nil
    ) async throws(GateError) -> GateResponse {
        // Errors and events name the request as the caller wrote it; the resolved one is sent,
        // coalesced and cached.
        let name = request.gateName
        let request = try request.resolved(against: baseURL, name: name)
        if let timeout, timeout < .zero { throw .negativeDuration(name, "timeout", timeout) }
        // The gate's own policy was validated when the gate was made.
        if let retry { try retry.validate(as: "retry", request: name) }
        let id = requestIDs.next()
        if let trace { instruments?.register(trace, as: id) }
        let policy = retry?.over(configuration.retry) ?? configuration.retry
        let flight = GateRequest(
            sender: self, request: request, body: body, key: coalescingKey.map(GateFlightKey.coalesced) ?? .request(id),
            id: id, name: name, timeout: timeout ?? configuration.requestTimeout,
            needsAuthorization: authorization.isRequired, retry: policy)
        let delivery = await storage.open(
            flight.key, request: id, name: name, priority: priority, needsAuthorization: flight.needsAuthorization,
            run: { task in
                { [storage] in
                    task.settleOpening(storage)
                    await flight.fly()
                }
            },
            whenOpened: { requestLog?.open(id, request, metadata: metadata) })
        switch delivery {
        case .ended(let outcome):
            switch outcome.value {
            case .success(let reply): return reply
            // The flights share one shutdown error; each caller's names its own request.
            case .failure(let error) where error.code == .shutDown: throw .shutDown(name)
            case .failure(let error): throw error
            }
        case .cancelled: throw .cancelled(name)
        case .refused(let failure): throw failure.error(name: name)
        }
    }

    /// Starts a refresh now, or joins the running one, and returns the credential version
    /// current when it ended.
    func refreshNow() async throws(GateError) -> Int {
        switch await storage.refreshNow(caller: requestIDs.next(), now: clock.now) {
        case .send(_, let version): return version
        // A refresh() caller is never handed a slot: it needs none.
        case .proceed, .granted: return storage.credentialVersion
        case .fail(let failure), .failNow(let failure): throw failure.error(name: nil)
        case .cancelled, .cancelledNow: throw GateError.cancelled(nil)
        }
    }
}

extension GateFailure {
    /// The error this failure ends request `name` with (`nil`: a ``RequestGate/refresh()``);
    /// `status` is the request's last response's, if it had one.
    func error(name: String?, status: Int? = nil) -> GateError {
        let error: GateError =
            switch self {
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
