import HTTPTypes

/// How a ``RequestGate`` retries a request: a task's ``RetryPolicy`` (how many sends, how long
/// between them) plus what only requests need — which failures may be answered by sending
/// again (idempotency), and how far a server's `Retry-After` is honoured.
///
/// A request that failed on the network, or whose response was classified
/// ``ResponseVerdict/retry``, may already have been carried out by the server: a `POST` that
/// timed out after the server charged a card must not be sent again. So by default
/// (``automatic``) only idempotent requests are retried: `GET`, `HEAD`, `OPTIONS`, `PUT`,
/// `DELETE` and `TRACE`, and any request with an `Idempotency-Key` header field. Others fail
/// after their first send unless they opt in. The gate's ``GateConfiguration/retry`` is every
/// request's policy; a request's own replaces it, except for what it leaves unsaid: `.always()`
/// and `.never` keep the gate's ``schedule``, and a policy given no `retryAfter` keeps the
/// gate's ``retryAfter``:
///
/// ```swift
/// // The server deduplicates by the order's id, so retrying the POST is safe:
/// try await gate.send(placeOrder, body: .bytes(Array(json.utf8)), retry: .always())
/// // A search that is worthless once stale: one send, whatever happens.
/// try await gate.send(search, retry: .never)
/// // A slow endpoint that deserves more tries, each wait three times the one before:
/// try await gate.send(export, retry: .automatic(.attempts(6, backoff: .milliseconds(200), multiplier: 3)))
/// // A server whose Retry-After is not to be trusted: back off as the schedule says.
/// try await gate.send(feedRequest, retry: .automatic(retryAfter: .ignored))
/// ```
///
/// Whatever the policy, a request is re-sent after a refresh when the server rejected its
/// credential (``ResponseVerdict/credentialExpired``): a rejected credential means the server
/// did nothing. That re-send counts against the same attempt budget
/// (``RetryPolicy/maxAttempts`` of the ``schedule``). A transport error the transport calls
/// permanent (``GateTransport/classify(_:)``) is never retried, and neither is a request with
/// a streamed body.
public struct RequestRetryPolicy: Hashable, Sendable, CustomStringConvertible {
    private enum Condition: Hashable, Sendable {
        case whenIdempotent, always, never
    }

    /// How far a server's `Retry-After` (in seconds, on a response classified
    /// ``ResponseVerdict/retry``) replaces the ``schedule``'s wait.
    ///
    /// ```swift
    /// // A longer Retry-After ends the request:
    /// let capped: RequestRetryPolicy = .automatic(retryAfter: .honoured(upTo: .seconds(10)))
    /// // The schedule's waits, always:
    /// let ignoring: RequestRetryPolicy = .automatic(retryAfter: .ignored)
    /// ```
    public struct RetryAfter: Hashable, Sendable, CustomStringConvertible {
        /// The longest `Retry-After` honoured; `nil` when it is ignored.
        public let maximum: Duration?

        /// The server's wait is honoured up to `maximum`; a server asking for more ends the
        /// request with ``GateError/Code/retriesExhausted`` rather than holding it for that
        /// long. Zero honours only `Retry-After: 0`. Negative is reported when the policy is
        /// given (``GateError/Code/negativeDuration``).
        public static func honoured(upTo maximum: Duration) -> RetryAfter { RetryAfter(maximum: maximum) }

        /// The server's `Retry-After` is ignored: the request waits as its ``schedule`` says.
        public static let ignored = RetryAfter(maximum: nil)

        /// Honoured up to two minutes.
        public static let `default` = RetryAfter.honoured(upTo: .seconds(120))

        public var description: String { maximum.map { "honoured up to \($0.shortDescription)" } ?? "ignored" }
    }

    private let condition: Condition
    /// The schedule and the `Retry-After` rule as given; `nil` leaves them to the gate's policy
    /// (and, for the gate's own, to ``defaultSchedule`` and ``RetryAfter/default``).
    private var givenSchedule: RetryPolicy?
    private var givenRetryAfter: RetryAfter?

    /// How many sends in all, across every kind of retry, and the waits between them:
    /// ``defaultSchedule`` unless given (for a request's own policy: the gate's, unless given).
    public var schedule: RetryPolicy {
        get { givenSchedule ?? Self.defaultSchedule }
        set { givenSchedule = newValue }
    }

    /// How far a server's `Retry-After` replaces the schedule's wait: ``RetryAfter/default``
    /// unless given (for a request's own policy: the gate's, unless given).
    public var retryAfter: RetryAfter {
        get { givenRetryAfter ?? .default }
        set { givenRetryAfter = newValue }
    }

    private init(_ condition: Condition, _ schedule: RetryPolicy?, _ retryAfter: RetryAfter?) {
        self.condition = condition
        self.givenSchedule = schedule
        self.givenRetryAfter = retryAfter
    }

    /// Three sends in all, waiting 200 ms, then 400 ms (each wait twice the one before, at
    /// most 30 seconds, with jitter): the gate's schedule unless its configuration gives one.
    public static let defaultSchedule = RetryPolicy.attempts(
        3, backoff: .milliseconds(200), multiplier: 2, maxBackoff: .seconds(30))

    /// Retries only idempotent requests (by method, or an `Idempotency-Key` header field), on
    /// the gate's schedule, honouring `Retry-After` as the gate does. The gate's default, with
    /// the ``defaultSchedule`` and `Retry-After` honoured up to two minutes.
    public static let automatic = RequestRetryPolicy(.whenIdempotent, nil, nil)

    /// Retries only idempotent requests, on `schedule` (`nil`: the gate's), honouring
    /// `Retry-After` as `retryAfter` says (`nil`: as the gate does).
    public static func automatic(_ schedule: RetryPolicy? = nil, retryAfter: RetryAfter? = nil) -> RequestRetryPolicy {
        RequestRetryPolicy(.whenIdempotent, schedule, retryAfter)
    }

    /// Retries whatever the method, on `schedule` (`nil`: the gate's): for a request you know
    /// the server can receive twice.
    public static func always(_ schedule: RetryPolicy? = nil, retryAfter: RetryAfter? = nil) -> RequestRetryPolicy {
        RequestRetryPolicy(.always, schedule, retryAfter)
    }

    /// Never retries after a transport error or a ``ResponseVerdict/retry`` verdict. The request
    /// is still re-sent after a refresh when its credential was rejected, within the gate's
    /// ``RetryPolicy/maxAttempts``.
    public static let never = RequestRetryPolicy(.never, nil, nil)

    public var description: String {
        let condition =
            switch condition {
            case .whenIdempotent: "automatic"
            case .always: "always"
            case .never: "never"
            }
        return givenSchedule.map { "\(condition) (max \($0.maxAttempts) attempts)" } ?? condition
    }

    /// This policy for a request, with what it leaves unsaid taken from the gate's `policy`.
    func over(_ policy: RequestRetryPolicy) -> RequestRetryPolicy {
        RequestRetryPolicy(condition, givenSchedule ?? policy.schedule, givenRetryAfter ?? policy.retryAfter)
    }

    /// Why `request` may not be sent again after a failure, or `nil` when it may.
    func refusal(for request: HTTPRequest) -> String? {
        switch condition {
        case .always: nil
        case .never: "not retried: its retry policy is never"
        case .whenIdempotent:
            Self.isIdempotent(request) ? nil : "not retried: \(request.method.rawValue) is not idempotent"
        }
    }

    /// The first value out of range, named under `owner` as the API spells it
    /// (`GateConfiguration.retry`, or `retry` for a send's own policy). What a send's policy
    /// leaves to the gate's was checked with the gate's.
    func validate(as owner: String, request: String?) throws(GateError) {
        if schedule.initialBackoff < .zero {
            throw .negativeDuration(request, "\(owner).schedule.initialBackoff", schedule.initialBackoff)
        }
        if schedule.maxBackoff < .zero {
            throw .negativeDuration(request, "\(owner).schedule.maxBackoff", schedule.maxBackoff)
        }
        if let maximum = retryAfter.maximum, maximum < .zero {
            throw .negativeDuration(request, "\(owner).retryAfter", maximum)
        }
        if schedule.maxAttempts < 1 {
            throw .invalidConfiguration(
                "\(owner).schedule.maxAttempts", schedule.maxAttempts, minimum: 1, request: request)
        }
        if schedule.multiplier < 1 {
            throw .invalidConfiguration(
                "\(owner).schedule.multiplier", schedule.multiplier, minimum: 1, request: request)
        }
    }

    /// Idempotent by its method (RFC 9110, 9.2.2), or declared so by an `Idempotency-Key`.
    static func isIdempotent(_ request: HTTPRequest) -> Bool {
        switch request.method {
        case .get, .head, .options, .put, .delete, .trace: true
        default: request.headerFields[.idempotencyKey] != nil
        }
    }
}
