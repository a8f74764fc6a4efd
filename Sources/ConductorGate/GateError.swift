public import Foundation

/// An error from a ``RequestGate``.
///
/// Every message names the request it is about, as method and path — never a header, so
/// never a credential. Match on ``code`` rather than on the message:
///
/// ```swift
/// do {
///     let response = try await gate.send(feedRequest)
/// } catch let error where error.code == .refreshFailed {
///     showLogin()  // "GET /feed: the credential refresh failed: …"
/// }
/// ```
public struct GateError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong. New codes may be added, so a `switch` should have a `default`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Kind: Hashable, Sendable {
            case refreshFailed, retriesExhausted, shutDown, cancelled, transport, timedOut, rejected
            case bodyNotReplayable, negativeDuration, refreshTimedOut, refreshWindowExceeded, signedOut
            case invalidConfiguration
            case incompleteURL
        }

        fileprivate let kind: Kind

        /// The credential refresh this request waited for failed: the `refresh` closure threw.
        /// What it threw is ``GateError/underlyingError``.
        public static let refreshFailed = Code(kind: .refreshFailed)
        /// The credential refresh this request waited for missed its deadline
        /// (``GateConfiguration/refreshTimeout``).
        public static let refreshTimedOut = Code(kind: .refreshTimedOut)
        /// The credential was rejected again, but the ``GateConfiguration/refreshWindow``
        /// allows no further refresh yet: the message says how many refreshes ran in how long.
        public static let refreshWindowExceeded = Code(kind: .refreshWindowExceeded)
        /// The request needs the credential, and ``RequestGate/signOut()`` cleared it (while
        /// the request was queued or parked, or before it was sent).
        public static let signedOut = Code(kind: .signedOut)
        /// The request used its whole attempt budget without a usable response, or a response
        /// asked for a retry it may not have. How many sends it made is ``GateError/attempts``;
        /// the last response's status is ``GateError/status``.
        public static let retriesExhausted = Code(kind: .retriesExhausted)
        /// The gate was shut down before the request finished.
        public static let shutDown = Code(kind: .shutDown)
        /// The caller's task was cancelled.
        public static let cancelled = Code(kind: .cancelled)
        /// The transport threw, and no further attempt was allowed: the error is permanent (see
        /// ``GateTransport/classify(_:)``), the request may not be retried (see
        /// ``RequestRetryPolicy``), or its attempt budget is spent. What the transport threw is
        /// ``GateError/underlyingError``.
        public static let transport = Code(kind: .transport)
        /// The request did not finish within its deadline (``GateConfiguration/requestTimeout``
        /// or the `timeout` of ``RequestGate/send(_:body:priority:coalescingKey:timeout:authorization:retry:metadata:)``).
        /// A refresh that misses its own deadline is reported as ``refreshTimedOut``. When the
        /// request's last finished attempt failed in the transport (a connection refused, say,
        /// before the backoff the deadline cut short), what the transport threw is
        /// ``GateError/underlyingError`` and the message says it.
        public static let timedOut = Code(kind: .timedOut)
        /// The response was classified as a failure.
        public static let rejected = Code(kind: .rejected)
        /// The request needed another attempt, but its body can be sent only once.
        public static let bodyNotReplayable = Code(kind: .bodyNotReplayable)
        /// A duration of the ``GateConfiguration``, or the `timeout` of
        /// ``RequestGate/send(_:body:priority:coalescingKey:timeout:authorization:retry:metadata:)``, is negative; nothing was sent.
        public static let negativeDuration = Code(kind: .negativeDuration)
        /// A count in the ``GateConfiguration`` (or a ``RequestRetryPolicy``'s attempts or
        /// multiplier) is below its minimum, or its ``GateConfiguration/baseURL`` cannot be a base
        /// (no scheme or host, or a query or fragment): the gate is not created, or the request is
        /// not sent.
        public static let invalidConfiguration = Code(kind: .invalidConfiguration)
        /// The request names no scheme or no authority, and cannot take them from
        /// ``GateConfiguration/baseURL``: the gate has none, or the request names one of the two
        /// (a request names both, or neither). Nothing was sent.
        public static let incompleteURL = Code(kind: .incompleteURL)

        public var description: String { "\(kind)" }
    }

    /// What went wrong.
    public let code: Code
    /// A sentence that names the request.
    public let message: String
    /// The request, as method and path without the query: `"GET /feed"`.
    public let request: String?
    /// The status of the last response the request received, when it received one: a request
    /// whose 401 started a refresh that then failed ends ``Code/refreshFailed`` with 401.
    public let status: Int?
    /// The error behind this one, as it was thrown, so a caller can tell causes apart without
    /// reading the message: what the `refresh` closure threw (``Code/refreshFailed``), or what
    /// the transport threw (``Code/transport``, and ``Code/timedOut`` when the last finished
    /// attempt failed in the transport, and ``Code/retriesExhausted`` when an attempt before
    /// the responses that used up the budget failed in the transport: the latest such error).
    ///
    /// ```swift
    /// do {
    ///     _ = try await gate.send(request)
    /// } catch where error.code == .refreshFailed {
    ///     if let auth = error.underlyingError as? AuthError, auth == .revoked { showLogin() } else { retryLater() }
    /// }
    /// ```
    ///
    /// Not part of equality or hashing: two errors with the same code, message, request and
    /// status are equal whatever caused them.
    public var underlyingError: (any Error)? { cause?.error }
    /// How many times the request was sent before it ended: set for
    /// ``Code/retriesExhausted`` and ``Code/transport``, `nil` for every other code.
    ///
    /// ```swift
    /// func sendsMade() async -> Int? {
    ///     do {
    ///         _ = try await gate.send(feedRequest)
    ///         return 1
    ///     } catch {
    ///         return error.attempts  // 3 for "GET /feed: gave up after 3 attempt(s); …"
    ///     }
    /// }
    /// ```
    ///
    /// Like ``underlyingError``, not part of equality or hashing (the message says it too).
    public let attempts: Int?
    private let cause: Cause?

    /// The underlying error in a box, so that `GateError` stays `Hashable` without it.
    private struct Cause: Sendable {
        let error: any Error
    }

    package init(
        _ code: Code, _ message: String, request: String? = nil, status: Int? = nil, underlying: (any Error)? = nil,
        attempts: Int? = nil
    ) {
        self.code = code
        self.message = message
        self.request = request
        self.status = status
        self.cause = underlying.map(Cause.init)
        self.attempts = attempts
    }

    public static func == (lhs: GateError, rhs: GateError) -> Bool {
        lhs.code == rhs.code && lhs.message == rhs.message && lhs.request == rhs.request && lhs.status == rhs.status
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(message)
        hasher.combine(request)
        hasher.combine(status)
    }

    public var description: String { "GateError.\(code): \(message)" }

    /// This error with `status` as the last response's status, where it had none.
    func withStatus(_ status: Int?) -> GateError {
        guard self.status == nil, let status else { return self }
        return GateError(
            code, message, request: request, status: status, underlying: underlyingError, attempts: attempts)
    }

    private static func prefix(_ request: String?) -> String {
        request.map { "\($0): " } ?? ""
    }

    static func refreshFailed(_ request: String?, _ error: any Error) -> GateError {
        GateError(
            .refreshFailed, "\(prefix(request))the credential refresh failed: \(error)", request: request,
            underlying: error)
    }

    static func refreshTimedOut(_ request: String?, after timeout: Duration) -> GateError {
        GateError(
            .refreshTimedOut,
            "\(prefix(request))the credential refresh brought no credential within \(timeout.shortDescription)",
            request: request)
    }

    static func refreshWindowExceeded(_ request: String?, refreshes: Int, period: Duration) -> GateError {
        GateError(
            .refreshWindowExceeded,
            "\(prefix(request))the credential needs a refresh again after \(refreshes) refresh(es) within \(period.shortDescription); "
                + "no further refresh is allowed until the oldest leaves the window",
            request: request)
    }

    static func signedOut(_ request: String?) -> GateError {
        GateError(
            .signedOut, request.map { "\($0): signed out; the request needs a credential" } ?? "signed out",
            request: request)
    }

    /// `last` ends with why no further attempt was made when that was not the budget;
    /// `lastError` is what the transport threw on the latest attempt that failed in it.
    static func retriesExhausted(
        _ request: String, attempts: Int, last: String, status: Int?, lastError: (any Error)? = nil
    ) -> GateError {
        GateError(
            .retriesExhausted,
            "\(request): gave up after \(attempts) attempt(s); last: \(last)",
            request: request,
            status: status,
            underlying: lastError,
            attempts: attempts
        )
    }

    static func shutDown(_ request: String?) -> GateError {
        GateError(
            .shutDown, request.map { "\($0): the gate was shut down" } ?? "the gate was shut down", request: request)
    }

    /// `nil`: a ``RequestGate/refresh()`` caller, whose refresh goes on for everyone else.
    static func cancelled(_ request: String?) -> GateError {
        GateError(
            .cancelled,
            request.map { "\($0) was cancelled" }
                ?? "waiting for the credential refresh was cancelled; the refresh goes on",
            request: request)
    }

    /// `why`, when given, says why no further attempt was made: `"not retried: POST is not
    /// idempotent"`.
    static func transport(_ request: String, attempts: Int, _ error: any Error, why: String? = nil, status: Int? = nil)
        -> GateError
    {
        GateError(
            .transport,
            "\(request): transport failed after \(attempts) attempt(s)\(why.map { ", \($0)" } ?? ""): \(TransportErrorText.describe(error))",
            request: request, status: status, underlying: error, attempts: attempts)
    }

    /// `lastError`: what the transport threw on the last attempt, when it threw.
    static func timedOut(_ request: String, after duration: Duration, lastError: (any Error)? = nil) -> GateError {
        GateError(
            .timedOut,
            "\(request) timed out after \(duration.shortDescription)\(lastError.map { "; the last finished attempt failed: \(TransportErrorText.describe($0))" } ?? "")",
            request: request, underlying: lastError)
    }

    /// `parameter` as the API spells it: `GateConfiguration.requestTimeout`, `timeout`.
    static func negativeDuration(_ request: String?, _ parameter: String, _ value: Duration) -> GateError {
        GateError(
            .negativeDuration, "\(prefix(request))\(parameter) is negative (\(value.shortDescription))",
            request: request)
    }

    /// `setting` as the API spells it: `GateConfiguration.retry.schedule.maxAttempts`.
    static func invalidConfiguration(_ setting: String, _ value: Int, minimum: Int, request: String? = nil)
        -> GateError
    {
        GateError(
            .invalidConfiguration, "\(prefix(request))\(setting) must be at least \(minimum) (got \(value))",
            request: request)
    }

    /// `setting` as the API spells it: `GateConfiguration.baseURL`.
    static func invalidBaseURL(_ setting: String, _ url: URL) -> GateError {
        GateError(
            .invalidConfiguration,
            "\(setting) is \"\(url.absoluteString)\"; a base URL has a scheme and a host, and no query or fragment")
    }

    /// `missing`: what the request lacks, as "a scheme", "an authority" or both.
    static func incompleteURL(_ request: String, missing: String, hasBase: Bool) -> GateError {
        let why =
            hasBase
            ? "a request names both, or neither and takes them from GateConfiguration.baseURL"
            : "the gate has no GateConfiguration.baseURL to take them from"
        return GateError(.incompleteURL, "\(request) has no URL: it lacks \(missing), and \(why)", request: request)
    }

    static func rejected(_ request: String, status: Int) -> GateError {
        GateError(
            .rejected, "\(request): the response (status \(status)) was classified as a failure",
            request: request, status: status)
    }

    static func bodyNotReplayable(_ request: String, status: Int?) -> GateError {
        GateError(
            .bodyNotReplayable,
            "\(request) needed another attempt, but its body can be sent only once",
            request: request,
            status: status
        )
    }
}

/// What an app shows: `error.localizedDescription` is the message that names the culprit,
/// not Foundation's "The operation could not be completed".
extension GateError: LocalizedError {
    public var errorDescription: String? { message }
}

extension GateError: CodedError { package var codeName: String { "\(code)" } }
