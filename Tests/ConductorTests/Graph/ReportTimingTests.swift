import Conductor
import ConductorTestKit
import CoreMetrics
import InMemoryTracing
import Instrumentation
import Testing
import Tracing

/// A task's times in the report are its body's: read just before the body is called and just
/// after it returns, outside the run's lock — not when a worker was handed the task, nor when
/// the worker got the lock to record the end.
@Suite struct ReportTimingTests {
    /// Time spent on the worker outside the body, made deterministic: a tracer whose attempt
    /// spans take 3 ms to start and 4 ms to end on the run's manual clock, around bodies that
    /// take 5 ms each. `fetch` runs on the worker; `render` (it has a timeout) in a task of its
    /// own. Each record must span exactly its body's 5 ms; the tracer's time shows as waiting.
    ///
    /// What this proves: the stamps bracket the body, not the transitions that hand the task
    /// out and record its end (which used to stamp it: `fetch` 0–12 ms, `render` 12–24 ms).
    /// What it does not: that a wait for the run's lock is left out under contention — that
    /// wait is not user code, so a manual clock cannot stand in it. The untraced fast path
    /// reads the clock in the same places around the body, which this test does not reach.
    @Test func aTasksTimesBracketItsBodyAndNothingElse() async throws {
        let clock = ManualClock()
        let tracer = StallingTracer(
            clock: clock, stalls: ["fetch", "render"], start: .milliseconds(3), end: .milliseconds(4))
        var graph = TaskGraph()
        graph.add("fetch") { _ in clock.advance(by: .milliseconds(5)) }
        graph.add("render", dependsOn: ["fetch"], options: TaskOptions(timeout: .seconds(60))) { _ in
            clock.advance(by: .milliseconds(5))
        }

        let report = try await graph.run(
            clock: clock, telemetry: Telemetry(tracer: tracer, metrics: NOOPMetricsHandler.instance))

        #expect(report.isSuccess)
        let fetch = try #require(report["fetch"])
        #expect(fetch.startedAt == .milliseconds(3))
        #expect(fetch.endedAt == .milliseconds(8))
        #expect(fetch.runTime == .milliseconds(5))
        let render = try #require(report["render"])
        #expect(render.queuedAt == .milliseconds(8))
        // fetch's span end (4 ms) and render's span start (3 ms) are waiting, not running.
        #expect(render.waitTime == .milliseconds(7))
        #expect(render.startedAt == .milliseconds(15))
        #expect(render.endedAt == .milliseconds(20))
        #expect(render.runTime == .milliseconds(5))
        #expect(report.duration == .milliseconds(20))
        #expect(report.criticalPath == ["fetch", "render"])
    }
}

/// A tracer whose spans for the named operations take time on a manual clock to start and to
/// end: user code that runs on a graph's worker, outside the body, at a known cost.
struct StallingTracer: Tracer {
    let clock: ManualClock
    let stalls: Set<String>
    let start: Duration
    let end: Duration

    func startSpan<Instant: TracerInstant>(
        _ operationName: String,
        context: @autoclosure () -> ServiceContext,
        ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant,
        function: String,
        file fileID: String,
        line: UInt
    ) -> InMemorySpan {
        let stalls = stalls.contains(operationName)
        if stalls { clock.advance(by: start) }
        let (clock, end) = (clock, end)
        return InMemorySpan(
            operationName: operationName,
            context: context(),
            spanContext: InMemorySpanContext(traceID: "trace", spanID: operationName, parentSpanID: nil),
            kind: kind,
            startInstant: instant()
        ) { _ in
            if stalls { clock.advance(by: end) }
        }
    }

    func forceFlush() {}

    func inject<Carrier, Inject: Injector>(
        _ context: ServiceContext, into carrier: inout Carrier, using injector: Inject
    ) where Carrier == Inject.Carrier {}

    func extract<Carrier, Extract: Extractor>(
        _ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract
    ) where Carrier == Extract.Carrier {}
}
