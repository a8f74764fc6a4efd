import CoreMetrics

/// The gate's metrics (names in the Metrics article), made from the gate's events.
struct GateMetrics: Sendable {
    private let factory: any MetricsFactory
    private let retries: Counter
    private let cacheFallbacks: Counter
    /// Requests waiting for a slot: 0 from the gate's start, then every change.
    let queueDepth: SequencedGauge

    init(_ factory: any MetricsFactory) {
        self.factory = factory
        retries = Counter(label: Name.retries, factory: factory)
        cacheFallbacks = Counter(label: Name.cacheFallbacks, factory: factory)
        queueDepth = SequencedGauge(Gauge(label: Name.queueDepth, factory: factory), initial: 0)
    }

    /// Called with no lock held; `initial` records nothing (a request is counted when it ends).
    func record(_ event: GateEvent) {
        switch event {
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
        case .initial, .coalesced, .queued, .running, .redirect, .parked, .success, .failure, .refreshStarted,
            .refreshWindowExceeded, .signedIn, .signedOut:
            break
        }
    }

    /// One flight ended (coalesced callers share theirs): `succeeded`, `failed` or `cache`.
    func requestEnded(_ outcome: String, priority: RequestPriority?) {
        Counter(
            label: Name.requests,
            dimensions: [("outcome", outcome), ("priority", priority.map { "\($0)" } ?? "unknown")],
            factory: factory
        ).increment()
    }

    /// One caller's `send` returned, after `duration` on the gate's clock.
    func requestTimed(_ result: Result<GateResponse, GateError>, duration: Duration) {
        Timer(label: Name.requestDuration, dimensions: [("outcome", Self.outcome(result))], factory: factory)
            .recordNanoseconds(duration.nanoseconds)
    }

    /// `success`, `cache`, or the error's code in snake case (`timed_out`, `shut_down`, …).
    static func outcome(_ result: Result<GateResponse, GateError>) -> String {
        switch result {
        case .success(let reply): return reply.isFromCache ? "cache" : "success"
        case .failure(let error):
            var name = ""
            for character in "\(error.code)" {
                if character.isUppercase { name += "_" + character.lowercased() } else { name.append(character) }
            }
            return name
        }
    }

    private func refreshEnded(_ outcome: String) {
        Counter(label: Name.refreshes, dimensions: [("outcome", outcome)], factory: factory).increment()
    }

    enum Name {
        static let requests = "conductor_gate_requests_total"
        static let requestDuration = "conductor_gate_request_duration_seconds"
        static let queueDepth = "conductor_gate_queue_depth"
        static let refreshes = "conductor_gate_refreshes_total"
        static let retries = "conductor_gate_retries_total"
        static let cacheFallbacks = "conductor_gate_cache_fallbacks_total"
    }
}
