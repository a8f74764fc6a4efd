import Conductor
import InMemoryTracing
import MetricsTestKit
import Tracing

/// The tracer and the metrics backend the demo hands to Conductor: an `InMemoryTracer` and
/// swift-metrics' `TestMetrics`, in place of what an app bootstraps (swift-otel, Prometheus…),
/// so the demo can show what such a backend receives.
///
/// ```swift
/// let recording = DemoTelemetry()
/// let run = try page.schedule.start(telemetry: recording.telemetry)
/// print(TelemetryText.render(recording.spanTree()))
/// ```
final class DemoTelemetry: Sendable {
    private let tracer = InMemoryTracer()
    private let metrics = TestMetrics()

    /// What the launcher, the page, the gate and the harmonizer are given.
    var telemetry: Telemetry { Telemetry(tracer: tracer, metrics: metrics) }

    /// The spans of one request: the page task whose call started the token refresh (or, with
    /// no refresh, the page's first call), everything under it, and the spans above it.
    func spanTree() -> SpanTree {
        let spans = tracer.finishedSpans
        let byID = Dictionary(spans.map { ($0.spanID, $0) }, uniquingKeysWith: { first, _ in first })
        let children = Dictionary(grouping: spans.filter { $0.parentSpanID != nil }, by: { $0.parentSpanID! })
        let refresh = spans.first { $0.operationName == "gate.refresh" }
        let requestOfRefresh = refresh?.parentSpanID.flatMap { byID[$0] }
        let focus =
            requestOfRefresh.flatMap { request in request.parentSpanID.flatMap { byID[$0] } } ?? requestOfRefresh
            ?? spans.first { $0.attributes.text("conductor.task.id") == "basicInfo" }
        guard let focus else { return SpanTree(root: nil, ancestors: [], spanCount: spans.count) }

        func node(_ span: FinishedInMemorySpan) -> SpanTree.Node {
            let kids = (children[span.spanID] ?? []).sorted {
                $0.startInstant.nanosecondsSinceEpoch < $1.startInstant.nanosecondsSinceEpoch
            }
            return SpanTree.Node(
                name: span.operationName,
                duration: .nanoseconds(
                    Int64(span.endInstant.nanosecondsSinceEpoch) - Int64(span.startInstant.nanosecondsSinceEpoch)),
                attributes: span.attributes.sortedPairs,
                events: span.events.map { event in
                    let facts = event.attributes.sortedPairs.map { "\($0.key.split(separator: ".").last!)=\($0.value)" }
                    return facts.isEmpty ? event.name : "\(event.name)(\(facts.joined(separator: " ")))"
                },
                links: span.links.count,
                error: span.status?.code == .error
                    ? (span.status?.message ?? span.errors.first.map { ErrorText.short($0.error) } ?? "") : nil,
                children: kids.map(node))
        }
        var ancestors: [String] = []
        var parent = focus.parentSpanID.flatMap { byID[$0] }
        while let span = parent {
            ancestors.insert(span.operationName, at: 0)
            parent = span.parentSpanID.flatMap { byID[$0] }
        }
        return SpanTree(root: node(focus), ancestors: ancestors, spanCount: spans.count)
    }

    /// Every series recorded, one row each, ordered by name.
    func metricsTable() -> [MetricRow] {
        func dimensions(_ pairs: [(String, String)]) -> String {
            pairs.map { "\($0.0)=\($0.1)" }.joined(separator: " ")
        }
        var rows: [MetricRow] = []
        for counter in metrics.counters {
            rows.append(
                MetricRow(
                    name: counter.label, type: "counter", dimensions: dimensions(counter.dimensions),
                    value: "\(counter.totalValue)"))
        }
        for timer in metrics.timers {
            let values = timer.values
            let mean = values.isEmpty ? 0 : values.reduce(0, +) / Int64(values.count)
            rows.append(
                MetricRow(
                    name: timer.label, type: "timer", dimensions: dimensions(timer.dimensions),
                    value: "\(values.count)× mean \(Duration.nanoseconds(mean).shortDescription)"))
        }
        for recorder in metrics.recorders {
            let value = recorder.lastValue.map { $0 == $0.rounded() ? "\(Int($0))" : "\($0)" } ?? "-"
            rows.append(
                MetricRow(
                    name: recorder.label, type: recorder.aggregate ? "recorder" : "gauge",
                    dimensions: dimensions(recorder.dimensions),
                    value: "last \(value), max \(Int(recorder.values.max() ?? 0))"))
        }
        return rows.sorted { ($0.name, $0.dimensions) < ($1.name, $1.dimensions) }
    }
}

/// One request's spans as the tracer received them: what a trace viewer draws.
public struct SpanTree: Sendable {
    public struct Node: Sendable {
        /// The span's operation name: `graph.run`, a task's id, `GET`, `gate.refresh`.
        public var name: String
        public var duration: Duration
        /// Every attribute, by name.
        public var attributes: [(key: String, value: String)]
        /// The span's events in order, with their attributes: `running(attempt=1 credential_version=1)`.
        public var events: [String]
        /// How many links the span carries (a request released by a refresh links to it).
        public var links: Int
        /// The status message when the span ended with an error status.
        public var error: String?
        public var children: [Node]

        /// This node and every node under it, depth first.
        public var all: [Node] { [self] + children.flatMap(\.all) }
    }

    /// The page task's span for the request shown; `nil` when nothing was traced.
    public var root: Node?
    /// The names of the spans above it, outermost first (`graph.run`).
    public var ancestors: [String]
    /// How many spans the tracer received in the whole visit.
    public var spanCount: Int
}

/// One metric series as the backend received it.
public struct MetricRow: Sendable, Equatable {
    public var name: String
    /// `counter`, `timer`, `gauge` or `recorder`.
    public var type: String
    /// Its dimensions, `key=value`, in the order they were recorded.
    public var dimensions: String
    /// The total of a counter, the count and mean of a timer, the last value of a gauge.
    public var value: String
}

extension SpanAttributes {
    /// Every attribute as text, ordered by name.
    fileprivate var sortedPairs: [(key: String, value: String)] {
        var pairs: [(key: String, value: String)] = []
        forEach { key, value in pairs.append((key, value.text)) }
        return pairs.sorted { $0.key < $1.key }
    }

    fileprivate func text(_ key: String) -> String? {
        sortedPairs.first { $0.key == key }?.value
    }
}

extension SpanAttribute {
    fileprivate var text: String {
        switch self {
        case .string(let value): value
        case .int64(let value): "\(value)"
        case .int32(let value): "\(value)"
        case .double(let value): "\(value)"
        case .bool(let value): "\(value)"
        case .stringConvertible(let value): value.description
        default: "\(self)"
        }
    }
}
