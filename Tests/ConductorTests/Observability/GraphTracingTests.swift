import ConductorTestKit
import CoreMetrics
import InMemoryTracing
import Instrumentation
import Testing
import Tracing

@testable import ConductorAssembly
@testable import ConductorCore
@testable import ConductorGate
@testable import ConductorGraph
@testable import ConductorHarmonizer
@testable import ConductorLaunch
@testable import ConductorReports

/// Each test has its own `InMemoryTracer`, handed to the run through ``Telemetry``, so tests
/// running in parallel never see each other's spans.
@Suite struct GraphTracingTests {
    // MARK: - Span tree

    /// The run is a child of the caller's span; every attempt (a retried task has two) is a
    /// child of the run, with its id, attempt, placement and outcome as attributes.
    @Test func aRunIsASpanUnderTheCallerAndEachAttemptAChildOfIt() async throws {
        let tracer = InMemoryTracer()
        var graph = TaskGraph()
        graph.add("basicInfo") { _ in 1 }
        graph.add("sku", dependsOn: ["basicInfo"]) { _ in 2 }
        graph.add("flaky", options: TaskOptions(retry: .attempts(2, backoff: .zero))) { context in
            if context.attempt == 1 { throw TelemetryTestFailure() }
        }
        graph.addOnMainActor("render", dependsOn: ["sku"]) { _ in }
        graph.addMilestone("firstScreen", after: ["sku"])

        let caller = tracer.startSpan("caller")
        let report = try await ServiceContext.withValue(caller.context) {
            try await graph.run(telemetry: Telemetry(tracer: tracer))
        }
        caller.end()
        #expect(report.outcome.isCompleted)

        let spans = tracer.finishedSpans
        let callerSpan = try spans.one("caller")
        let run = try spans.one("graph.run")
        #expect(run.parentSpanID == callerSpan.spanID)
        #expect(run.traceID == callerSpan.traceID)
        #expect(run.string("conductor.run.outcome") == "completed")
        #expect(run.events.map(\.name) == ["firstScreen"])

        for id in ["basicInfo", "sku", "render"] {
            let task = try spans.one(id)
            #expect(task.parentSpanID == run.spanID, "\(id)")
            #expect(task.string("conductor.task.id") == id)
            #expect(task.int("conductor.task.attempt") == 1)
            #expect(task.string("conductor.task.outcome") == "succeeded")
            #expect(task.status == nil)
        }
        #expect(try spans.one("render").string("conductor.task.placement") == "main actor")
        #expect(try spans.one("sku").string("conductor.task.placement") == "global")

        let attempts = spans.named("flaky").sorted {
            ($0.int("conductor.task.attempt") ?? 0) < ($1.int("conductor.task.attempt") ?? 0)
        }
        #expect(attempts.map { $0.int("conductor.task.attempt") } == [1, 2])
        #expect(attempts.map { $0.string("conductor.task.outcome") } == ["failed", "succeeded"])
        #expect(attempts.allSatisfy { $0.parentSpanID == run.spanID })
        #expect(attempts.first?.errors.count == 1)
        #expect(attempts.first?.status?.code == .error)
        #expect(spans.count == 7)  // caller, run, basicInfo, sku, render, flaky ×2
    }

    /// A required task's failure: its span records the error with an error status, and so
    /// does the run's span; a timed-out attempt is an error too.
    @Test func failuresAndTimeoutsAreRecordedAsErrors() async throws {
        let tracer = InMemoryTracer()
        let clock = ManualClock()
        var graph = TaskGraph()
        graph.add("slow", options: TaskOptions(timeout: .seconds(1), failure: .optional)) { _ in
            try await clock.sleep(for: .seconds(60))
        }
        graph.add("broken", dependsOn: ["slow"], options: TaskOptions(whenDependencyFails: .runAnyway)) { _ in
            throw TelemetryTestFailure()
        }
        let run = try graph.start(clock: clock, telemetry: Telemetry(tracer: tracer))
        await clock.sleepers(atLeast: 2)  // the body and the run's timeout
        clock.advance(by: .seconds(1))
        let report = try await run.report()
        guard case .failed = report.outcome else {
            Issue.record("expected the run to fail, got \(report.outcome)")
            return
        }

        let spans = tracer.finishedSpans
        let slow = try spans.one("slow")
        #expect(slow.string("conductor.task.outcome") == "timed_out")
        #expect(slow.status?.code == .error)
        let broken = try spans.one("broken")
        #expect(broken.string("conductor.task.outcome") == "failed")
        #expect(broken.errors.first?.error is TelemetryTestFailure)
        #expect(broken.status?.code == .error)
        let runSpan = try spans.one("graph.run")
        #expect(runSpan.string("conductor.run.outcome") == "failed")
        #expect(runSpan.status?.code == .error)
        #expect(runSpan.errors.count == 1)
    }

    // MARK: - Context in bodies

    /// A body's `ServiceContext.current` is its attempt's span, whether it runs on a worker,
    /// in a timed attempt's own task or on the main actor: the user's spans nest under it.
    @Test func aTaskBodysOwnSpansNestUnderItsAttempt() async throws {
        let tracer = InMemoryTracer()
        var graph = TaskGraph()
        graph.add("plain") { _ in tracer.withSpan("user.plain") { _ in } }
        graph.add("timed", options: TaskOptions(timeout: .seconds(3600))) { _ in tracer.withSpan("user.timed") { _ in }
        }
        graph.addOnMainActor("main") { _ in tracer.withSpan("user.main") { _ in } }
        _ = try await graph.run(telemetry: Telemetry(tracer: tracer))

        let spans = tracer.finishedSpans
        for id in ["plain", "timed", "main"] {
            let user = try spans.one("user.\(id)")
            #expect(user.parentSpanID == (try spans.one(id)).spanID, "\(id)")
        }
    }

    /// Without a tracer the run keeps no instruments and its plain tasks take the fast path;
    /// the bodies still see the caller's context, untouched.
    @Test func aDisabledOrNoOpTracerCostsTheRunNothing() async throws {
        #expect(RunInstruments(.disabled, kind: .graph, spanName: "graph.run") == nil)
        let noOp = Telemetry(tracer: NoOpTracer(), metrics: NOOPMetricsHandler.instance)
        #expect(RunInstruments(noOp, kind: .graph, spanName: "graph.run") == nil)
        // No test bootstraps the process-wide systems: the default is off too.
        #expect(RunInstruments(.bootstrapped, kind: .graph, spanName: "graph.run") == nil)
        #expect(RunInstruments(Telemetry(tracer: InMemoryTracer()), kind: .graph, spanName: "x") != nil)

        let tracer = InMemoryTracer()
        let caller = tracer.startSpan("caller")
        let seen = Recorder<String?>()
        var graph = TaskGraph()
        graph.add("a") { _ in seen.append(ServiceContext.current?.inMemorySpanContext?.spanID) }
        _ = try await ServiceContext.withValue(caller.context) { try await graph.run(telemetry: .disabled) }
        caller.end()
        #expect(seen.all == [caller.context.inMemorySpanContext?.spanID])
        #expect(tracer.finishedSpans.map(\.operationName) == ["caller"])
    }

    // MARK: - Launches

    /// A launch is a span named after its launcher, with an event per readiness set; its
    /// tasks' attempts are its children.
    @Test func aLaunchIsASpanWithItsReadinessSetsAsEvents() async throws {
        let tracer = InMemoryTracer()
        let launcher = Launcher("appLaunch", telemetry: Telemetry(tracer: tracer))
        try launcher.add(TestStartupTask("channel"))
        try launcher.add(TestStartupTask("config"))
        try launcher.add(
            TestStartupTask("version", dependencies: [], options: TaskOptions(failure: .optional)) {
                throw TelemetryTestFailure()
            })
        try launcher.addReadiness("firstScreen", after: ["config"])
        try await launcher.run()

        let spans = tracer.finishedSpans
        let launch = try spans.one("appLaunch")
        #expect(launch.parentSpanID == nil)
        #expect(launch.string("conductor.run.kind") == "launch")
        #expect(launch.events.map(\.name) == ["firstScreen"])
        for id in ["channel", "config", "version"] {
            #expect(try spans.one(id).parentSpanID == launch.spanID, "\(id)")
        }
        #expect(try spans.one("version").status?.code == .error)
        #expect(launch.status == nil)
    }
}

extension RunOutcome {
    fileprivate var isCompleted: Bool {
        if case .completed = self { return true }
        return false
    }
}
