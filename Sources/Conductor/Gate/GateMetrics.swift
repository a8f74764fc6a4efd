import CoreMetrics

/// The gate's metrics (names in the Metrics article), made from the gate's events.
struct GateMetrics: Sendable {
    private let factory: any MetricsFactory
    private let retries: Counter
    private let cacheFallbacks: Counter
    private let queueDepth: Gauge

    init(_ factory: any MetricsFactory) {
        self.factory = factory
        retries = Counter(label: Name.retries, factory: factory)
        cacheFallbacks = Counter(label: Name.cacheFallbacks, factory: factory)
        queueDepth = Gauge(label: Name.queueDepth, factory: factory)
    }

    /// Called with no lock held; `initial` records nothing (a request is counted when it ends).
    func record(_ event: GateEvent, queueDepth: Int) {
        switch event {
        case .queued, .running:
            self.queueDepth.record(queueDepth)
        case .retry:
            retries.increment()
        case .useCache:
            cacheFallbacks.increment()
        case .refreshSucceeded:
            refreshEnded("succeeded")
        case .refreshFailed:
            refreshEnded("failed")
        case .refreshCancelled:
            refreshEnded("cancelled")
        case .initial, .coalesced, .redirect, .parked, .success, .failure, .refreshStarted, .refreshWindowExceeded,
            .signedIn, .signedOut:
            break
        }
    }

    /// One flight ended (coalesced callers share theirs): `succeeded`, `failed` or `cache`.
    func requestEnded(_ outcome: String, priority: PriorityScheduler.Priority?) {
        Counter(
            label: Name.requests,
            dimensions: [("outcome", outcome), ("priority", priority.map { "\($0)" } ?? "unknown")],
            factory: factory
        ).increment()
    }

    private func refreshEnded(_ outcome: String) {
        Counter(label: Name.refreshes, dimensions: [("outcome", outcome)], factory: factory).increment()
    }

    enum Name {
        static let requests = "conductor_gate_requests_total"
        static let queueDepth = "conductor_gate_queue_depth"
        static let refreshes = "conductor_gate_refreshes_total"
        static let retries = "conductor_gate_retries_total"
        static let cacheFallbacks = "conductor_gate_cache_fallbacks_total"
    }
}
