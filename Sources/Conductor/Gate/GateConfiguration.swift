/// The knobs of a ``RequestGate``.
///
/// ```swift
/// var configuration = GateConfiguration()
/// configuration.maxConcurrentRequests = 6
/// configuration.maxAttempts = 4
/// configuration.jitterSeed = 42          // reproducible backoff in tests
/// let gate = RequestGate(transport: transport, configuration: configuration, authorize: …, refresh: …)
/// ```
public struct GateConfiguration: Sendable {
    /// How many requests may be on the wire at once; `nil` for no limit. The credential
    /// refresh never counts against it. Below 1 counts as 1.
    public var maxConcurrentRequests: Int?
    /// Sends allowed per request, across every kind of retry: backoff after an error or a
    /// "retry" verdict, and re-sending after a credential change. At least 1.
    public var maxAttempts: Int
    /// The backoff before the second attempt; it doubles for each further one.
    public var initialBackoff: Duration
    /// The longest backoff.
    public var maxBackoff: Duration
    /// The longest `Retry-After` the gate honours; a server asking for more ends the request
    /// with ``GateError/Code/retriesExhausted`` rather than holding it for that long.
    public var maxRetryAfter: Duration
    /// How long a credential refresh may take before it counts as failed.
    public var refreshTimeout: Duration
    /// How long a request may take in all — queued, parked behind a refresh, backing off and
    /// on the wire — before it ends with ``GateError/Code/timedOut``; `nil` for no limit.
    public var requestTimeout: Duration?
    /// Seeds the backoff jitter, for reproducible runs; `nil` draws from the system.
    public var jitterSeed: UInt64?
    /// How many events the gate keeps for ``RequestGate/events`` readers that fall behind.
    public var eventRetention: Int
    /// How many starts a waiting request may be passed over by before it goes next. Below 1
    /// counts as 1.
    public var agingThreshold: Int

    public init(
        maxConcurrentRequests: Int? = nil,
        maxAttempts: Int = 3,
        initialBackoff: Duration = .milliseconds(200),
        maxBackoff: Duration = .seconds(30),
        maxRetryAfter: Duration = .seconds(120),
        refreshTimeout: Duration = .seconds(30),
        requestTimeout: Duration? = nil,
        jitterSeed: UInt64? = nil,
        eventRetention: Int = 1_000,
        agingThreshold: Int = 64
    ) {
        self.maxConcurrentRequests = maxConcurrentRequests
        self.maxAttempts = max(1, maxAttempts)
        self.initialBackoff = initialBackoff
        self.maxBackoff = maxBackoff
        self.maxRetryAfter = maxRetryAfter
        self.refreshTimeout = refreshTimeout
        self.requestTimeout = requestTimeout
        self.jitterSeed = jitterSeed
        self.eventRetention = eventRetention
        self.agingThreshold = agingThreshold
    }
}
