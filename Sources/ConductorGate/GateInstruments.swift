import CoreMetrics
import HTTPTypes
import Instrumentation
import Logging
import Tracing

/// A gate's spans and metrics, made once per gate and only when its ``Telemetry`` records
/// something; the gate's storage calls it at the points where it emits events.
///
/// A request's span is started and ended by ``RequestGate/send(_:body:priority:coalescingKey:timeout:authorization:retry:metadata:)``
/// in the caller's task; ``record(_:)`` turns the events the storage emits into span events
/// and metrics. It runs with no Conductor lock held, after the transition that journaled the
/// events, so the tracer and the metrics handlers (user code) are never called under a lock. The lock here guards the map from
/// request ids to spans and what the events alone cannot say (below); the gate's own state —
/// who is parked behind the refresh — comes from its transitions (`releasedByRefresh`).
final class GateInstruments: Sendable {
    private struct State {
        var traces: [UInt64: RequestTrace] = [:]
        /// Each open request's priority as its `initial` event told it, for the metric of its
        /// end. Not the machine's (its flight table keeps the priority raised by joining
        /// callers, and only while the flight is open): a request's opening and its end are
        /// told from different tasks, after the lock, so an end can be told first (a cancel
        /// while the opening is still being carried out): it then waits here, as `.ended`, for
        /// the opening, which records it with its priority and removes it.
        var priorities: [UInt64: PriorityRecord] = [:]
        /// The context of the running refresh's span, once its refresher has started.
        var refresh: ServiceContext?

        /// Request `id` ended with `outcome`: its metric goes into `ended` with the priority
        /// its opening told, or waits for an opening not told yet.
        mutating func end(
            _ id: UInt64, _ outcome: String,
            into ended: inout [(outcome: String, priority: RequestPriority?)], metrics: Bool
        ) {
            guard metrics else { return }
            if case .open(let priority) = priorities.removeValue(forKey: id) {
                ended.append((outcome, priority))
            } else {
                priorities[id] = .ended(outcome: outcome)
            }
        }
    }

    /// A request's priority as its opening told it, or its end waiting for that opening.
    enum PriorityRecord {
        case open(RequestPriority)
        case ended(outcome: String)
    }

    /// One request's span.
    final class RequestTrace: Sendable {
        let span: any Span
        /// Whether the span records what it is given (`Span.isRecording` when it started);
        /// one that does not is never registered, and is only ended.
        let isRecording: Bool
        /// The storage's id for the request, once registered: a caller coalesced onto another's
        /// flight never sees an end event of its own, so ``end(_:_:)`` forgets it by this id.
        fileprivate let id = Lock<UInt64?>(nil)

        init(_ span: any Span, isRecording: Bool) {
            self.span = span
            self.isRecording = isRecording
        }
    }

    let tracer: (any Tracer)?
    private let metrics: GateMetrics?
    /// The gate's clock, which times requests for ``GateMetrics``.
    private let clock: ClockSource
    private let state = Lock(State())

    /// `nil` when `telemetry` records nothing.
    init?(_ telemetry: Telemetry, clock: ClockSource) {
        let tracer = telemetry.activeTracer
        let factory = telemetry.activeMetrics
        guard tracer != nil || factory != nil else { return nil }
        self.tracer = tracer
        self.metrics = factory.map(GateMetrics.init)
        self.clock = clock
    }

    /// Now on the gate's clock, for ``end(_:_:startedAt:)``; `nil` without metrics.
    var requestStart: Duration? { metrics == nil ? nil : clock.now }

    // MARK: - Requests

    /// Starts a request's span, a child of the caller's `ServiceContext`. Its attributes name
    /// the method and path (never the query, never a header: no credential), and carry the
    /// caller's `metadata`, each key an attribute of its own.
    func startRequest(
        _ request: HTTPRequest, name: String, priority: RequestPriority, metadata: Logger.Metadata
    ) -> RequestTrace? {
        guard let tracer else { return nil }
        let span = tracer.startSpan(
            request.method.rawValue, context: ServiceContext.current ?? .topLevel, ofKind: .client)
        // A span that records nothing (sampled out, or a tracer that drops everything) still
        // carries the context to the transport and is ended, but is given nothing to drop:
        // no attributes, no events, no place among the spans the events are told to.
        guard span.isRecording else { return RequestTrace(span, isRecording: false) }
        // One update, not one dictionary write through the span per attribute.
        span.updateAttributes { attributes in
            for (key, value) in metadata { attributes[key] = "\(value)" }
            attributes[Attribute.method] = request.method.rawValue
            attributes[Attribute.request] = name
            attributes[Attribute.priority] = "\(priority)"
        }
        span.addEvent("initial")
        return RequestTrace(span, isRecording: true)
    }

    /// Binds the span to the storage's id for the request, before any event of it is emitted.
    func register(_ trace: RequestTrace, as id: UInt64) {
        guard trace.isRecording else { return }
        trace.id.withLock { $0 = id }
        state.withLock { $0.traces[id] = trace }
    }

    /// One caller's request ended: its span, if it has one, and its duration since
    /// `startedAt` (``requestStart``), if metrics are recorded.
    func end(_ trace: RequestTrace?, _ result: Result<GateResponse, GateError>, startedAt: Duration?) {
        if let metrics, let startedAt { metrics.requestTimed(result, duration: clock.now - startedAt) }
        if let trace { end(trace, result) }
    }

    private func end(_ trace: RequestTrace, _ result: Result<GateResponse, GateError>) {
        guard trace.isRecording else { return trace.span.end() }
        if let id = trace.id.withLock({ $0 }) {
            state.withLock { state in
                if state.traces[id] === trace { state.traces[id] = nil }
            }
        }
        let span = trace.span
        switch result {
        case .success(let reply):
            span.updateAttributes { attributes in
                attributes[Attribute.status] = Int64(reply.response.status.code)
                attributes[Attribute.outcome] = reply.isFromCache ? "cache" : "succeeded"
            }
        case .failure(let error):
            span.updateAttributes { attributes in
                attributes[Attribute.outcome] = "failed"
                attributes[Attribute.errorCode] = "\(error.code)"
            }
            span.recordError(error)
            span.setStatus(SpanStatus(code: .error, message: "\(error.code)"))
        }
        span.end()
    }

    /// Writes the current trace context (the request's span, inherited by the flight's task)
    /// into the request's header fields, before the transport sees it.
    func inject(into request: inout HTTPRequest) {
        guard let tracer, let context = ServiceContext.current else { return }
        tracer.inject(context, into: &request.headerFields, using: HTTPFieldsInjector())
    }

    // MARK: - The refresh

    /// Wraps the user's refresh so that each call runs in a span of its own — a child of the
    /// request that started it — with that span's context current, so the user's own calls
    /// nest under it; the requests it releases link to it.
    func traced<Credential: Sendable>(
        _ refresh: @escaping @Sendable (Credential?) async throws -> Credential
    ) -> @Sendable (Credential?) async throws -> Credential {
        guard let tracer else { return refresh }
        return { [weak self] old in
            let span = tracer.startSpan("gate.refresh", context: ServiceContext.current ?? .topLevel, ofKind: .client)
            // Read before the lock: `context` is the tracer's code.
            let context = span.context
            self?.state.withLock { $0.refresh = context }
            do {
                let credential = try await ServiceContext.$current.withValue(span.context) { try await refresh(old) }
                span.attributes[Attribute.outcome] = "succeeded"
                span.end()
                return credential
            } catch {
                span.attributes[Attribute.outcome] = error is CancellationError ? "cancelled" : "failed"
                span.recordError(error)
                span.setStatus(SpanStatus(code: .error))
                span.end()
                throw error
            }
        }
    }

    // MARK: - Events

    /// Called with the queue depth a transition left, after the gate's lock is released, in
    /// any order with other transitions' (the gauge keeps the newest).
    func record(_ depth: GateQueueDepth.Sample) {
        metrics?.queueDepth.offer(depth.depth, sequence: depth.sequence)
    }

    /// Called with the events of one transition, after the gate's lock is released, and the
    /// requests it released if it ended a refresh.
    func record(_ events: some Collection<GateEvent>, releasedByRefresh: [UInt64] = []) {
        var spanEvents: [(any Span, SpanEvent)] = []
        var links: [(any Span, ServiceContext)] = []
        var ended: [(outcome: String, priority: RequestPriority?)] = []
        state.withLock { state in
            for event in events {
                switch event {
                case .initial(let id, _, let priority):
                    guard metrics != nil else { break }
                    if case .ended(let outcome) = state.priorities.removeValue(forKey: id) {
                        ended.append((outcome, priority))
                    } else {
                        state.priorities[id] = .open(priority)
                    }
                case .queued(let id, let priority):
                    if let span = state.traces[id]?.span {
                        spanEvents.append(
                            (span, SpanEvent(name: "queued", attributes: [Attribute.priority: "\(priority)"])))
                    }
                case .running(let id, let attempt, let version):
                    if let span = state.traces[id]?.span {
                        let attributes: SpanAttributes = [
                            Attribute.attempt: .int64(Int64(attempt)),
                            Attribute.credentialVersion: .int64(Int64(version)),
                        ]
                        spanEvents.append((span, SpanEvent(name: "running", attributes: attributes)))
                    }
                case .retry(let id, let attempt, let delay):
                    if let span = state.traces[id]?.span {
                        let attributes: SpanAttributes = [
                            Attribute.attempt: .int64(Int64(attempt)), Attribute.delay: .int64(delay.nanoseconds),
                        ]
                        spanEvents.append((span, SpanEvent(name: "retry", attributes: attributes)))
                    }
                case .redirect(let id, let version), .parked(let id, let version):
                    if let span = state.traces[id]?.span {
                        let attributes: SpanAttributes = [Attribute.credentialVersion: .int64(Int64(version))]
                        let name = if case .redirect = event { "redirect" } else { "parked" }
                        spanEvents.append((span, SpanEvent(name: name, attributes: attributes)))
                    }
                case .useCache(let id):
                    if let span = state.traces[id]?.span { spanEvents.append((span, SpanEvent(name: "use-cache"))) }
                    state.end(id, "cache", into: &ended, metrics: metrics != nil)
                    state.traces[id] = nil
                case .success(let id, _):
                    state.end(id, "succeeded", into: &ended, metrics: metrics != nil)
                    state.traces[id] = nil
                case .failure(let id, _):
                    state.end(id, "failed", into: &ended, metrics: metrics != nil)
                    state.traces[id] = nil
                case .refreshSucceeded, .refreshFailed:
                    if let refresh = state.refresh {
                        for id in releasedByRefresh {
                            if let span = state.traces[id]?.span { links.append((span, refresh)) }
                        }
                    }
                    state.refresh = nil
                case .refreshCancelled, .signedIn, .signedOut:
                    // Parked requests are released by the sign-in, sign-out or shutdown, not by
                    // a refresh: nothing links to the refresh.
                    state.refresh = nil
                case .coalesced, .refreshStarted, .refreshWindowExceeded:
                    break
                }
            }
        }
        for (span, event) in spanEvents { span.addEvent(event) }
        for (span, context) in links {
            span.addLink(SpanLink(context: context, attributes: [Attribute.link: "refresh"]))
        }
        guard let metrics else { return }
        for event in events { metrics.record(event) }
        for (outcome, priority) in ended { metrics.requestEnded(outcome, priority: priority) }
    }

    enum Attribute {
        static let method = "http.request.method"
        static let status = "http.response.status_code"
        static let request = "conductor.gate.request"
        static let priority = "conductor.gate.priority"
        static let outcome = "conductor.gate.outcome"
        static let errorCode = "conductor.gate.error_code"
        static let attempt = "conductor.gate.attempt"
        static let credentialVersion = "conductor.gate.credential_version"
        static let delay = "conductor.gate.retry_delay_ns"
        static let link = "conductor.gate.link"
    }
}
