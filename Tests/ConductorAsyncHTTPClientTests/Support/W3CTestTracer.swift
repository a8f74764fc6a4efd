import InMemoryTracing
import Instrumentation
import Tracing

/// An `InMemoryTracer` that propagates its context as a W3C `traceparent`
/// (`00-<trace id>-<span id>-01`, the ids zero-padded), as a production tracer would: the
/// in-memory tracer's own fields have other names, and the tests count `traceparent`s.
struct W3CTestTracer: Tracer {
    let recorder = InMemoryTracer()

    var finishedSpans: [FinishedInMemorySpan] { recorder.finishedSpans }

    func startSpan<Instant: TracerInstant>(
        _ operationName: String,
        context: @autoclosure () -> ServiceContext,
        ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant,
        function: String,
        file fileID: String,
        line: UInt
    ) -> InMemorySpan {
        recorder.startSpan(
            operationName, context: context(), ofKind: kind, at: instant(), function: function, file: fileID,
            line: line)
    }

    func forceFlush() {}

    func inject<Carrier, Inject: Injector>(
        _ context: ServiceContext, into carrier: inout Carrier, using injector: Inject
    ) where Carrier == Inject.Carrier {
        guard let span = context.inMemorySpanContext else { return }
        injector.inject(Self.traceparent(span), forKey: "traceparent", into: &carrier)
    }

    func extract<Carrier, Extract: Extractor>(
        _ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract
    ) where Carrier == Extract.Carrier {}

    static func traceparent(_ span: InMemorySpanContext) -> String {
        "00-\(padded(span.traceID, to: 32))-\(padded(span.spanID, to: 16))-01"
    }

    private static func padded(_ id: String, to width: Int) -> String {
        String(repeating: "0", count: max(0, width - id.count)) + id
    }
}
