import Conductor
import HTTPTypes
import Instrumentation
import Synchronization
import Testing
import Tracing

/// A tracer whose spans record nothing (`isRecording` false), as a sampled-out trace's are:
/// the gate hands such a span no attributes and no events, but still makes it the transport's
/// context and ends it (issue 36).
@Suite struct GateSilentTracerTests {
    /// What the gate did to the silent spans.
    final class Calls: Sendable {
        let started = Atomic(0)
        let given = Atomic(0)
        let ended = Atomic(0)
    }

    struct SilentSpan: Span {
        let context: ServiceContext
        let calls: Calls
        var isRecording: Bool { false }
        var operationName: String {
            get { "silent" }
            nonmutating set { calls.given.add(1, ordering: .relaxed) }
        }
        var attributes: SpanAttributes {
            get { [:] }
            nonmutating set { calls.given.add(1, ordering: .relaxed) }
        }
        func setStatus(_ status: SpanStatus) { calls.given.add(1, ordering: .relaxed) }
        func addLink(_ link: SpanLink) { calls.given.add(1, ordering: .relaxed) }
        func addEvent(_ event: SpanEvent) { calls.given.add(1, ordering: .relaxed) }
        func recordError<Instant: TracerInstant>(
            _ error: any Error, attributes: SpanAttributes, at instant: @autoclosure () -> Instant
        ) { calls.given.add(1, ordering: .relaxed) }
        func end<Instant: TracerInstant>(at instant: @autoclosure () -> Instant) {
            calls.ended.add(1, ordering: .relaxed)
        }
    }

    struct SilentTracer: Tracer {
        let calls: Calls
        func startSpan<Instant: TracerInstant>(
            _ operationName: String, context: @autoclosure () -> ServiceContext, ofKind kind: SpanKind,
            at instant: @autoclosure () -> Instant, function: String, file fileID: String, line: UInt
        ) -> SilentSpan {
            calls.started.add(1, ordering: .relaxed)
            return SilentSpan(context: context(), calls: calls)
        }
        func forceFlush() {}
        func extract<Carrier, Extract: Extractor>(
            _ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract
        ) where Extract.Carrier == Carrier {}
        func inject<Carrier, Inject: Injector>(
            _ context: ServiceContext, into carrier: inout Carrier, using injector: Inject
        ) where Inject.Carrier == Carrier {
            injector.inject("silent", forKey: "traceparent", into: &carrier)
        }
    }

    /// Two requests, one succeeding and one rejected: each span is started and ended once, is
    /// given nothing, and its context still reaches the transport.
    @Test func aSpanThatRecordsNothingIsGivenNothingButStillEndsAndPropagates() async throws {
        let calls = Calls()
        let transport = ScriptedTransport(valid: "t0", script: [.ok, .notFound])
        let gate = try RequestGate<String>(
            transport: transport,
            credential: "t0",
            configuration: GateConfiguration(jitterSeed: 1, telemetry: Telemetry(tracer: SilentTracer(calls: calls))),
            authorize: { request, token in request.headerFields[.authorization] = "Bearer \(token)" },
            refresh: { _ in "t0" }
        )
        let ok = try await gate.send(HTTPRequest(method: .get, scheme: "https", authority: "example.test", path: "/a"))
        #expect(ok.response.status == .ok)
        let failed = await #expect(throws: GateError.self) {
            try await gate.send(HTTPRequest(method: .get, scheme: "https", authority: "example.test", path: "/b"))
        }
        #expect(failed?.code == .rejected)
        #expect(calls.started.load(ordering: .relaxed) == 2)
        #expect(calls.ended.load(ordering: .relaxed) == 2)
        #expect(calls.given.load(ordering: .relaxed) == 0)
        #expect(transport.requests.map { $0.headerFields[HTTPField.Name("traceparent")!] } == ["silent", "silent"])
    }
}
