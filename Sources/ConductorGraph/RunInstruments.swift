import CoreMetrics
import Instrumentation
import Tracing

/// A run's spans and metrics, made once per run and only when its ``Telemetry`` records
/// something: a run without one holds `nil` and its tasks take the path they take without
/// tracing.
///
/// The tracer and the metrics handlers are user code: every call to them happens outside the
/// lock here and outside the run's lock. The lock only guards which span is the run's.
package final class RunInstruments: Sendable {
    /// Tells a launch's metrics from a graph run's (the `kind` dimension).
    package enum Kind: String, Sendable {
        case graph
        case launch
    }

    private struct State {
        var span: (any Span)?
        /// Milestones reached before the span started (those that wait for nothing).
        var early: [(name: String, at: Duration)] = []
    }

    /// The tracer, when tasks get spans.
    let tracer: (any Tracer)?
    private let metrics: (any MetricsFactory)?
    private let kind: Kind
    private let spanName: String
    private let state = Lock(State())

    /// `nil` when `telemetry` records nothing, so the run keeps no instruments at all.
    package init?(_ telemetry: Telemetry, kind: Kind, spanName: String) {
        let tracer = telemetry.activeTracer
        let metrics = telemetry.activeMetrics
        guard tracer != nil || metrics != nil else { return nil }
        self.tracer = tracer
        self.metrics = metrics
        self.kind = kind
        self.spanName = spanName
    }

    // MARK: - The run's span

    /// Starts the run's span as a child of the caller's `ServiceContext` and returns the
    /// context its tasks run in, or `nil` without a tracer.
    func startRun() -> ServiceContext? {
        guard let tracer else { return nil }
        let span = tracer.startSpan(spanName, context: ServiceContext.current ?? .topLevel, ofKind: .internal)
        span.attributes[Attribute.runKind] = kind.rawValue
        let early = state.withLock { state in
            state.span = span
            defer { state.early.removeAll() }
            return state.early
        }
        for milestone in early { Self.add(milestone, to: span) }
        return span.context
    }

    /// A milestone (a launch's readiness set) becomes an event of the run's span.
    func milestoneReached(_ name: String, at time: Duration) {
        guard tracer != nil else { return }
        let span = state.withLock { state -> (any Span)? in
            if state.span == nil { state.early.append((name, time)) }
            return state.span
        }
        if let span { Self.add((name, time), to: span) }
    }

    private static func add(_ milestone: (name: String, at: Duration), to span: any Span) {
        span.addEvent(
            SpanEvent(
                name: milestone.name,
                attributes: [
                    Attribute.milestone: .string(milestone.name),
                    Attribute.milestoneAt: .int64(milestone.at.nanoseconds),
                ]
            )
        )
    }

    /// Ends the run's span and records the run's metrics, before anyone can read its report.
    func finish(_ report: RunReport) {
        let span = state.withLock { $0.span }
        if let span {
            span.attributes[Attribute.runOutcome] = report.outcome.metricName
            if case .failed(let error) = report.outcome {
                span.recordError(error)
                span.setStatus(SpanStatus(code: .error, message: error.message))
            }
            span.end()
        }
        if let metrics { record(report, in: metrics) }
    }

    // MARK: - Task attempts

    /// Starts the span of one attempt, a child of the run's span (the worker's current context).
    static func startAttempt(
        _ tracer: any Tracer, id: String, attempt: Int, placement: String
    ) -> any Span {
        let span = tracer.startSpan(id, context: ServiceContext.current ?? .topLevel, ofKind: .internal)
        span.attributes[Attribute.taskID] = id
        span.attributes[Attribute.attempt] = Int64(attempt)
        span.attributes[Attribute.placement] = placement
        return span
    }

    static func end(_ span: any Span, with result: AttemptInTask.Result) {
        let outcome: TaskOutcome
        switch result {
        case .success:
            outcome = .succeeded
        case .cancelled:
            outcome = .cancelled
        case .failure(let error):
            outcome = .failed(error)
            span.recordError(error)
            span.setStatus(SpanStatus(code: .error))
        case .timedOut(let after):
            outcome = .timedOut(after: after)
            span.setStatus(SpanStatus(code: .error, message: "timed out after \(after.shortDescription)"))
        }
        // The same names as the metrics' `outcome` dimension.
        span.attributes[Attribute.taskOutcome] = outcome.metricName
        span.end()
    }

    // MARK: - Metrics

    /// Per-task metrics come from the report's records, which hold the engine's own times:
    /// no clock is read and nothing is recorded while the run's tasks are running.
    private func record(_ report: RunReport, in factory: any MetricsFactory) {
        let kind = ("kind", kind.rawValue)
        Counter(
            label: MetricName.runs, dimensions: [kind, ("outcome", report.outcome.metricName)], factory: factory
        ).increment()
        var outcomes: [String: Int64] = [:]
        var retries: Int64 = 0
        let duration = Timer(label: MetricName.taskDuration, dimensions: [kind], factory: factory)
        let wait = Timer(label: MetricName.queueWait, dimensions: [kind], factory: factory)
        for task in report.tasks {
            outcomes[task.outcome.metricName, default: 0] += 1
            retries += Int64(max(0, task.attempts - 1))
            if let runTime = task.runTime { duration.recordNanoseconds(runTime.nanoseconds) }
            if let waitTime = task.waitTime { wait.recordNanoseconds(waitTime.nanoseconds) }
        }
        for (outcome, count) in outcomes.sorted(by: { $0.key < $1.key }) {
            Counter(label: MetricName.tasks, dimensions: [kind, ("outcome", outcome)], factory: factory)
                .increment(by: count)
        }
        if retries > 0 {
            Counter(label: MetricName.retries, dimensions: [kind], factory: factory).increment(by: retries)
        }
    }

    enum MetricName {
        static let runs = "conductor_graph_runs_total"
        static let tasks = "conductor_graph_tasks_total"
        static let taskDuration = "conductor_graph_task_duration_seconds"
        static let queueWait = "conductor_graph_task_queue_wait_seconds"
        static let retries = "conductor_graph_task_retries_total"
    }

    enum Attribute {
        static let runKind = "conductor.run.kind"
        static let runOutcome = "conductor.run.outcome"
        static let taskID = "conductor.task.id"
        static let attempt = "conductor.task.attempt"
        static let placement = "conductor.task.placement"
        static let taskOutcome = "conductor.task.outcome"
        static let milestone = "conductor.milestone"
        static let milestoneAt = "conductor.milestone.at_ns"
    }
}

extension RunOutcome {
    /// The `outcome` dimension and attribute: `completed`, `failed` or `cancelled`.
    var metricName: String {
        switch self {
        case .completed: "completed"
        case .failed: "failed"
        case .cancelled: "cancelled"
        }
    }
}

extension TaskOutcome {
    /// The `outcome` dimension: `succeeded`, `failed`, `timed_out`, `skipped` or `cancelled`.
    var metricName: String {
        switch self {
        case .succeeded: "succeeded"
        case .failed: "failed"
        case .timedOut: "timed_out"
        case .skipped: "skipped"
        case .cancelled: "cancelled"
        }
    }
}
