public import CoreMetrics
public import Tracing

/// Where Conductor's spans and metrics go: a tracer and a metrics factory, given to a graph
/// run, a launcher, a request gate or a harmonizer.
///
/// ```swift
/// // An app: bootstrap once; every primitive picks the backends up by default.
/// InstrumentationSystem.bootstrap(otelTracer)
/// MetricsSystem.bootstrap(prometheusFactory)
/// let report = try await graph.run()
///
/// // A test: its own in-memory tracer, whatever other tests run beside it.
/// import InMemoryTracing
/// let tracer = InMemoryTracer()
/// let tested = try await graph.run(telemetry: Telemetry(tracer: tracer))
/// ```
///
/// The default, ``bootstrapped``, reads `InstrumentationSystem.tracer` and
/// `MetricsSystem.factory` when the primitive is made (a graph: when it starts). A tracer that
/// is a `NoOpTracer` and a factory that is `NOOPMetricsHandler` — what both systems hold until
/// bootstrapped — are recognised once, at that point, and switched off: a graph then runs its
/// tasks exactly as it does with ``disabled``, without creating a span or touching a metric.
/// See <doc:Tracing> and <doc:Metrics> for what is recorded.
///
/// - Complexity: O(1) to make; the tracer and the factory are called only from Conductor's
///   own tasks, never while Conductor holds a lock.
public struct Telemetry: Sendable {
    /// Receives a span per graph run, task attempt, launch, gate request and token refresh.
    public var tracer: any Tracer
    /// Makes the counters, timers and gauges listed in <doc:Metrics>.
    public var metrics: any MetricsFactory

    /// A tracer and a metrics factory; each defaults to what the process has bootstrapped.
    public init(
        tracer: any Tracer = InstrumentationSystem.tracer,
        metrics: any MetricsFactory = MetricsSystem.factory
    ) {
        self.tracer = tracer
        self.metrics = metrics
    }

    /// Whatever the process has bootstrapped (`InstrumentationSystem`, `MetricsSystem`), read
    /// now.
    public static var bootstrapped: Telemetry { Telemetry() }

    /// No spans and no metrics, whatever the process has bootstrapped.
    public static var disabled: Telemetry {
        Telemetry(tracer: NoOpTracer(), metrics: NOOPMetricsHandler.instance)
    }

    /// The tracer, or `nil` when it records nothing: decided once, so a hot path tests one
    /// optional instead of calling a no-op tracer.
    package var activeTracer: (any Tracer)? {
        tracer is NoOpTracer ? nil : tracer
    }

    /// The factory, or `nil` when it records nothing.
    package var activeMetrics: (any MetricsFactory)? {
        metrics is NOOPMetricsHandler ? nil : metrics
    }
}
