public import Foundation

/// The knobs of a ``RequestGate``.
///
/// ```swift
/// var configuration = GateConfiguration()
/// configuration.maxConcurrentRequests = 6
/// configuration.retry = .automatic(.attempts(4, backoff: .milliseconds(200), multiplier: 3))
/// configuration.jitterSeed = 42          // reproducible backoff in tests
/// let gate = try RequestGate(transport: transport, configuration: configuration, authorize: authorize, refresh: refresh)
/// ```
///
/// Setting a field checks nothing; the ``RequestGate`` initializer checks them all and throws
/// for the first bad one, naming it: ``GateError/Code/negativeDuration`` for a negative
/// duration, ``GateError/Code/invalidConfiguration`` for a count below its minimum. No value
/// is clamped silently.
public struct GateConfiguration: Sendable {
    /// How many requests may be on the wire at once; `nil` for no limit. The credential
    /// refresh never counts against it. At least 1.
    public var maxConcurrentRequests: Int?
    /// Every request's retry policy unless it gives its own (which replaces this one whole):
    /// which failures are retried (by default only those of idempotent requests), how many
    /// sends in all — across every kind of retry: backoff after an error or a "retry" verdict,
    /// and re-sending after a credential change — the waits between them, and how far a
    /// server's `Retry-After` is honoured. ``RequestRetryPolicy/automatic`` unless set: three
    /// sends, waiting 200 ms then 400 ms, `Retry-After` honoured up to two minutes.
    public var retry: RequestRetryPolicy
    /// How long a credential refresh may take before it counts as failed. Zero fails every
    /// refresh that has to wait.
    public var refreshTimeout: Duration
    /// How long a request may take in all — queued, parked behind a refresh, backing off and
    /// on the wire — before it ends with ``GateError/Code/timedOut``; `nil` for no limit.
    public var requestTimeout: Duration?
    /// Seeds the backoff jitter, for reproducible runs; `nil` draws from the system.
    public var jitterSeed: UInt64?
    /// How many events the gate keeps for ``RequestGate/events`` readers that fall behind. At
    /// least 1.
    public var eventRetention: Int
    /// The aging bound: a queued request is overtaken — a request queued after it starts
    /// first — at most this many times, whatever the arrival pattern and the priorities
    /// (see ``PriorityScheduler``). With a limit of one, a `low` request queued behind a
    /// stream of `high` ones starts after at most `agingThreshold` of them. At least 1.
    public var agingThreshold: Int

    /// At most ``maxRefreshes`` credential refreshes in any period of length ``period``,
    /// measured on the gate's clock.
    ///
    /// ```swift
    /// configuration.refreshWindow = .init(maxRefreshes: 2, period: .seconds(30))
    /// ```
    ///
    /// A server that rejects every fresh credential (rotated signing keys, clock skew) would
    /// otherwise get one refresh per wave of traffic, forever.
    public struct RefreshWindow: Hashable, Sendable {
        /// Refreshes allowed within one period. At least 1.
        public var maxRefreshes: Int
        /// The length of the sliding window.
        public var period: Duration

        public init(maxRefreshes: Int, period: Duration) {
            self.maxRefreshes = maxRefreshes
            self.period = period
        }

        /// Five refreshes in any 30 seconds: more than an app whose credential lasts minutes
        /// ever needs, and few enough that a server rejecting every fresh credential sees a
        /// handful of refreshes, not one per request.
        public static let `default` = RefreshWindow(maxRefreshes: 5, period: .seconds(30))
    }

    /// The bound on refreshes across requests: ``RefreshWindow/default`` (5 in 30 seconds)
    /// unless set; `nil` for no bound. When a rejection (or a credential judged stale, or
    /// ``RequestGate/refresh()``) would start one refresh too many, that request, and every
    /// request already queued for a slot, ends with ``GateError/Code/refreshWindowExceeded``
    /// (and the gate emits ``GateEvent/refreshWindowExceeded(refreshes:period:)``); after the
    /// oldest refresh has left the window, the gate refreshes again. ``RequestGate/signIn(_:)``
    /// empties the window.
    public var refreshWindow: RefreshWindow? = .default

    /// Where requests that name only a path go: a request with no scheme and no authority takes
    /// both from this URL, and its path goes after this URL's path. `nil` (the default): every
    /// request names its own, and one that does not fails with ``GateError/Code/incompleteURL``.
    ///
    /// ```swift
    /// import HTTPTypes
    ///
    /// configuration.baseURL = URL(string: "https://api.example.com/v1")
    /// let feed = try await gate.send(HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/feed"))
    /// // sent to https://api.example.com/v1/feed
    /// ```
    ///
    /// A request that names its scheme and authority is sent where it says. The URL must have a
    /// scheme and a host, and no query or fragment (``GateError/Code/invalidConfiguration``).
    public var baseURL: URL?

    /// Receives a span per request (an event per state, a link to the refresh that released
    /// it), a span per token refresh, and the gate's metrics; the trace context goes into each
    /// outgoing request's header fields. By default whatever the process has bootstrapped,
    /// read when the configuration is made. See <doc:Tracing> and <doc:Metrics>.
    public var telemetry: Telemetry

    public init(
        maxConcurrentRequests: Int? = nil,
        retry: RequestRetryPolicy = .automatic,
        refreshTimeout: Duration = .seconds(30),
        requestTimeout: Duration? = nil,
        jitterSeed: UInt64? = nil,
        eventRetention: Int = 1_000,
        agingThreshold: Int = 64,
        telemetry: Telemetry = .bootstrapped
    ) {
        self.maxConcurrentRequests = maxConcurrentRequests
        self.retry = retry
        self.refreshTimeout = refreshTimeout
        self.requestTimeout = requestTimeout
        self.jitterSeed = jitterSeed
        self.eventRetention = eventRetention
        self.agingThreshold = agingThreshold
        self.telemetry = telemetry
    }

    /// Throws for the first field that is out of range, named as the API spells it.
    func validate() throws(GateError) {
        if let baseURL, GateBaseURL(baseURL) == nil { throw .invalidBaseURL("GateConfiguration.baseURL", baseURL) }
        if let (parameter, value) = negativeDuration { throw .negativeDuration(nil, parameter, value) }
        try retry.validate(as: "GateConfiguration.retry", request: nil)
        let counts: [(String, Int?)] = [
            ("maxConcurrentRequests", maxConcurrentRequests),
            ("eventRetention", eventRetention), ("agingThreshold", agingThreshold),
            ("refreshWindow.maxRefreshes", refreshWindow?.maxRefreshes),
        ]
        for case (let name, let value?) in counts where value < 1 {
            throw .invalidConfiguration("GateConfiguration.\(name)", value, minimum: 1)
        }
    }

    /// The first negative duration, named as the property is.
    private var negativeDuration: (parameter: String, value: Duration)? {
        let durations: [(String, Duration?)] = [
            ("refreshTimeout", refreshTimeout), ("requestTimeout", requestTimeout),
            ("refreshWindow.period", refreshWindow?.period),
        ]
        for case (let name, let value?) in durations where value < .zero {
            return ("GateConfiguration.\(name)", value)
        }
        return nil
    }
}
