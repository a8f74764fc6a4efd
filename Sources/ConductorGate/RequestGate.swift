public import HTTPTypes
import Instrumentation
public import Logging
import Tracing

/// Sends HTTP requests in priority order through one credential that may expire at any
/// moment, refreshing it once however many requests notice.
///
/// ```swift
/// import ConductorURLSession
///
/// let gate = try RequestGate<Token>(
///     transport: URLSessionTransport(),
///     authorize: { request, token in request.headerFields[.authorization] = "Bearer \(token.value)" },
///     requiresRefresh: { token, now in token.expires < now + .seconds(30) },  // optional
///     refresh: { _ in try await auth.fetchExpiringToken() }   // must not go through this gate
/// )
/// let feed = try await gate.send(HTTPRequest(method: .get, scheme: "https", authority: host, path: "/feed"),
///                                priority: .high)
/// ```
///
/// Each attempt waits for a slot on a ``PriorityScheduler`` (see
/// ``GateConfiguration/agingThreshold`` for the bound on how long). The refresh needs no slot.
/// The rejection (the ``ResponseVerdict/credentialExpired`` verdict) that decides a refresh
/// puts the gate in its refreshing state in the same step: from then on no request is sent
/// with the credential being replaced — each one that reaches its slot is parked, without
/// holding the slot, and every request already on the wire with it that comes back rejected
/// parks too, without a second refresh. A rejection of a credential that has since been
/// replaced is simply sent again. When the refresh fails, every request parked or queued
/// behind it fails once (``GateError/Code/refreshFailed``, or
/// ``GateError/Code/refreshTimedOut`` at its deadline).
///
/// The credential can also be set from outside: ``signIn(_:)`` and ``signOut()``, which
/// cancel a running refresh. A request sent with ``RequestAuthorization/anonymous`` carries
/// no credential at all.
///
/// A credential the app knows to be stale need not be sent to learn it: with `requiresRefresh`,
/// the first request that finds it stale starts the refresh before sending, and the others park
/// behind it as after a rejection. ``refresh()`` starts one with no request at all.
///
/// Retries share one budget per request (the ``RetryPolicy/maxAttempts`` of
/// ``GateConfiguration/retry``), back off exponentially with jitter by the policy's multiplier,
/// honour `Retry-After` up to a cap, and never replay a streamed body.
/// Failures are retried only where that is safe — idempotent requests, transient transport
/// errors — unless a request's ``RequestRetryPolicy`` says otherwise.
/// ``GateConfiguration/refreshWindow`` bounds refreshes across requests (5 in 30 seconds
/// unless set).
public final class RequestGate<Credential: Sendable>: Sendable {
    let sender: GateSender
    var storage: GateStorage { sender.storage }
    /// The user's closures, bound to each credential the gate meets.
    private let binding: ErasedCredential.Binding<Credential>

    /// Creates a gate, or throws ``GateError`` naming the first field of `configuration` that is
    /// out of range (``GateError/Code/negativeDuration``, ``GateError/Code/invalidConfiguration``).
    ///
    /// - Parameters:
    ///   - transport: sends the requests.
    ///   - credential: the credential to start with; `nil` makes the first request that needs
    ///     one refresh. (Unlike ``signOut()``, which fails such requests until ``signIn(_:)``.)
    ///   - configuration: limits, attempts, backoff, timeouts and the refresh window.
    ///   - cache: where successful responses are kept for the "use cache" fallback.
    ///   - clock: the clock every wait of the gate uses (timeouts, backoff, the refresh
    ///     deadline and window); `ContinuousClock` by default.
    ///   - logger: receives every event, with its facts as metadata (``GateEvent/log(to:)``);
    ///     nothing is logged without one.
    ///   - authorize: adds the credential to a request (an `Authorization` header field, say);
    ///     runs for every attempt, with the credential current when the attempt starts.
    ///   - classify: reads a response; ``ResponseVerdict/standard(for:)`` by default.
    ///   - requiresRefresh: judges the current credential before each send, given the time on
    ///     `clock` (so a test's manual clock drives it): `true` refreshes it first, as a rejection
    ///     would, without sending the stale one. A request refreshes a stale credential once,
    ///     and when the ``GateConfiguration/refreshWindow`` allows no refresh it sends what is
    ///     current and lets the server judge. `nil` (the default) sends whatever is current and
    ///     learns of expiry from the server. Called outside every gate lock.
    ///   - refresh: fetches a new credential, given the one being replaced. It runs in a task
    ///     of its own, within ``GateConfiguration/refreshTimeout``; it is cancelled by
    ///     ``signIn(_:)``, ``signOut()`` and ``shutdown()``, and must not send through this
    ///     gate (send the login call with ``RequestAuthorization/anonymous`` instead).
    public init<GateClock: Clock<Duration>>(
        transport: some GateTransport,
        credential: Credential? = nil,
        configuration: GateConfiguration = GateConfiguration(),
        cache: (any ResponseCache)? = nil,
        clock: GateClock = ContinuousClock(),
        logger: Logger? = nil,
        authorize: @escaping @Sendable (inout HTTPRequest, Credential) -> Void,
        classify: @escaping @Sendable (HTTPResponse) -> ResponseVerdict = ResponseVerdict.standard(for:),
        requiresRefresh: (@Sendable (Credential, GateClock.Instant) -> Bool)? = nil,
        refresh: @escaping @Sendable (Credential?) async throws -> Credential
    ) throws(GateError) {
        try configuration.validate()
        var isStale: (@Sendable (Credential) -> Bool)?
        if let requiresRefresh {
            isStale = { @Sendable credential in requiresRefresh(credential, clock.now) }
        }
        let binding = ErasedCredential.Binding(authorize: authorize, isStale: isStale, refresh: refresh)
        self.binding = binding
        sender = GateSender(
            transport: transport, credential: credential.map(binding.bind),
            configuration: configuration, cache: cache, clock: ClockSource(clock), logger: logger, classify: classify,
            judges: requiresRefresh != nil,
            refresh: { old in
                guard let old else { return try await binding.fetchFirst() }
                return try await old.refreshed()
            })
    }

    /// The gate's events, starting with the oldest one still retained.
    public var events: EventSequence<GateEvent> { EventSequence(source: storage, startIndex: 0) }

    /// The events journaled so far, oldest retained first, without waiting: what a log line
    /// or a failure report shows of the gate's recent past. A request's final event is
    /// journaled before its caller returns, so after `send` returns its whole story is here.
    ///
    /// ```swift
    /// if let error = failure { logger.error("\(error); gate: \(gate.recordedEvents.suffix(10))") }
    /// ```
    public var recordedEvents: [GateEvent] { storage.recordedEvents }

    /// The version of the current credential: 0 before the first, plus one per successful
    /// refresh and per ``signIn(_:)``.
    public var credentialVersion: Int { storage.credentialVersion }

    /// Sends `request` and returns the response the business code classified as a success
    /// (or, after a network failure, a cached one).
    ///
    /// - Parameters:
    ///   - request: the request; the gate adds the credential to each attempt.
    ///   - body: the body; a ``GateRequestBody/stream(_:)`` body is never sent twice.
    ///   - priority: the request's lane; `.unique` makes it run alone.
    ///   - coalescingKey: requests with an equal key share one flight while it lasts.
    ///   - timeout: how long the request may take in all, from this call on, measured on the
    ///     gate's clock; `nil` uses ``GateConfiguration/requestTimeout``. A shared flight keeps
    ///     the deadline of the request that started it. Zero times out at once; a negative
    ///     timeout is rejected before anything is sent.
    ///   - authorization: ``RequestAuthorization/anonymous`` sends without the credential.
    ///   - retry: which failures may be answered by sending again, how many sends the request
    ///     gets and how long it waits between them; `nil` uses ``GateConfiguration/retry``
    ///     (by default only idempotent requests are retried: see ``RequestRetryPolicy``). A
    ///     request's own policy replaces the gate's whole. A shared flight keeps the policy of
    ///     the request that started it.
    ///   - metadata: what ties the request to the work that caused it (an incoming request's
    ///     id, say): every line the gate's `logger` writes about the request carries it, and so
    ///     does the request's span, one attribute per key. A shared flight's lines carry the
    ///     metadata of the request that started it.
    /// - Throws: ``GateError``: ``GateError/Code/negativeDuration`` at once for a negative
    ///   `timeout`; ``GateError/Code/invalidConfiguration`` for a `retry` of fewer than 1 attempt
    ///   or a multiplier below 1, and ``GateError/Code/negativeDuration`` for its negative waits;
    ///   ``GateError/Code/signedOut`` at once after ``signOut()`` for a request that needs the
    ///   credential; cancelling the calling task ends the call at once with
    ///   ``GateError/Code/cancelled`` (a shared flight goes on for its other callers).
    public func send(
        _ request: HTTPRequest,
        body: GateRequestBody? = nil,
        priority: RequestPriority = .default,
        coalescingKey: String? = nil,
        timeout: Duration? = nil,
        authorization: RequestAuthorization = .required,
        retry: RequestRetryPolicy? = nil,
        metadata: Logger.Metadata = [:]
    ) async throws(GateError) -> GateResponse {
        guard let instruments = sender.instruments else {
            return try await sender.send(
                request, body: body, priority: priority, coalescingKey: coalescingKey, timeout: timeout,
                authorization: authorization, retry: retry, metadata: metadata)
        }
        let startedAt = instruments.requestStart
        let trace = instruments.startRequest(
            request, name: request.gateName, priority: priority, metadata: metadata)
        // The request's span is the flight's `ServiceContext.current` (its task copies it), so
        // the transport's request carries it and a refresh it starts is its child.
        let result = await ServiceContext.$current.withValue(trace?.span.context ?? ServiceContext.current) {
            () async -> Result<GateResponse, GateError> in
            do throws(GateError) {
                return .success(
                    try await sender.send(
                        request, body: body, priority: priority, coalescingKey: coalescingKey, timeout: timeout,
                        authorization: authorization, retry: retry, metadata: metadata, trace: trace))
            } catch {
                return .failure(error)
            }
        }
        instruments.end(trace, result, startedAt: startedAt)
        return try result.get()
    }

    /// Refreshes the credential now, without sending anything — for an app coming back from the
    /// background, or a screen that must not start with a credential about to expire — and
    /// returns the credential version current when it returns (the refresh's, unless a
    /// ``signIn(_:)`` came since).
    ///
    /// ```swift
    /// func sceneWillEnterForeground() async {
    ///     do { try await gate.refresh() } catch where error.code == .refreshFailed { showLogin() } catch {}
    /// }
    /// ```
    ///
    /// A refresh running already is joined, not repeated. Requests that need the credential
    /// park behind this one as behind any refresh; it counts against
    /// ``GateConfiguration/refreshWindow`` and keeps ``GateConfiguration/refreshTimeout``.
    /// Emits ``GateEvent/refreshStarted(fromVersion:request:)`` with no request.
    ///
    /// - Throws: ``GateError``: ``GateError/Code/refreshFailed`` (with the refresh's error as
    ///   ``GateError/underlyingError``), ``GateError/Code/refreshTimedOut``,
    ///   ``GateError/Code/refreshWindowExceeded``, ``GateError/Code/signedOut`` after
    ///   ``signOut()``, ``GateError/Code/shutDown``; ``GateError/Code/cancelled`` when the calling
    ///   task is cancelled (the refresh goes on for whoever else waits).
    @discardableResult
    public func refresh() async throws(GateError) -> Int {
        try await sender.refreshNow()
    }

    /// Makes `credential` current, as a new version (the user logged in again, or the app got
    /// a credential by other means). Requests parked behind a refresh go out with it; a
    /// refresh running now is cancelled and its result discarded, so a stale refresh never
    /// overwrites a newer credential; ``GateConfiguration/refreshWindow`` starts afresh.
    /// Emits ``GateEvent/signedIn(version:)``. Does nothing after ``shutdown()``.
    public func signIn(_ credential: Credential) {
        storage.replace(.signIn(binding.bind(credential)))
    }

    /// Clears the credential. A running refresh is cancelled; requests that need the
    /// credential and are parked or queued for a slot fail once with
    /// ``GateError/Code/signedOut``, and so do later ones, at once, until ``signIn(_:)``.
    /// Requests on the wire finish; ``RequestAuthorization/anonymous`` requests are unaffected.
    /// Emits ``GateEvent/signedOut``. Does nothing after ``shutdown()``.
    public func signOut() {
        storage.replace(.signOut)
    }

    /// Ends every pending request once with ``GateError/Code/shutDown`` (cancelling what is on
    /// the wire and a running refresh), refuses new ones, and finishes ``events``.
    public func shutdown() {
        storage.replace(.shutdown)
    }
}
