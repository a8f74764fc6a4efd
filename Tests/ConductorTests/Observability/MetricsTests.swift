import Conductor
import ConductorTestKit
import CoreMetrics
import HTTPTypes
import MetricsTestKit
import Testing

/// The metrics each primitive records, into a `TestMetrics` of the test's own (never the
/// process-wide factory, so tests running beside each other never share counts).
@Suite struct MetricsTests {
    // MARK: - Graph

    /// A run on a manual clock: `a` runs 2 s, `b` after it, `flaky` fails three attempts
    /// (optional), `late` is skipped behind it.
    @Test func aRunCountsItsOutcomeTasksRetriesAndTimes() async throws {
        let metrics = TestMetrics()
        let clock = ManualClock()
        var graph = TaskGraph()
        graph.add("a") { _ in try await clock.sleep(for: .seconds(2)) }
        graph.add("b", dependsOn: ["a"]) { _ in }
        graph.add("flaky", options: TaskOptions(retry: .attempts(3, backoff: .zero), failure: .optional)) { _ in
            throw TelemetryTestFailure()
        }
        graph.add("late", dependsOn: ["flaky"], options: TaskOptions(failure: .optional)) { _ in }
        let run = try graph.start(clock: clock, telemetry: Telemetry(metrics: metrics))
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(2))
        _ = try await run.report()

        let graphKind = ("kind", "graph")
        #expect(
            try metrics.expectCounter("conductor_graph_runs_total", [graphKind, ("outcome", "completed")]).totalValue
                == 1)
        let tasks = "conductor_graph_tasks_total"
        #expect(try metrics.expectCounter(tasks, [graphKind, ("outcome", "succeeded")]).totalValue == 2)
        #expect(try metrics.expectCounter(tasks, [graphKind, ("outcome", "failed")]).totalValue == 1)
        #expect(try metrics.expectCounter(tasks, [graphKind, ("outcome", "skipped")]).totalValue == 1)
        #expect(try metrics.expectCounter("conductor_graph_task_retries_total", [graphKind]).totalValue == 2)
        let durations = try metrics.expectTimer("conductor_graph_task_duration_seconds", [graphKind]).values
        #expect(durations.count == 3)  // the skipped task never ran
        #expect(durations.max() == 2_000_000_000)
        let waits = try metrics.expectTimer("conductor_graph_task_queue_wait_seconds", [graphKind]).values
        #expect(waits.count == 3)
    }

    @Test func aLaunchCountsUnderItsOwnKind() async throws {
        let metrics = TestMetrics()
        let launcher = Launcher(telemetry: Telemetry(metrics: metrics))
        try launcher.add(TestStartupTask("config") { throw TelemetryTestFailure() })
        await #expect(throws: LaunchError.self) { try await launcher.run() }
        let launch = ("kind", "launch")
        #expect(
            try metrics.expectCounter("conductor_graph_runs_total", [launch, ("outcome", "failed")]).totalValue == 1)
        #expect(
            try metrics.expectCounter("conductor_graph_tasks_total", [launch, ("outcome", "failed")]).totalValue == 1)
        #expect(metrics.counters(label: "conductor_graph_runs_total").count == 1)
    }

    // MARK: - Gate

    static func makeGate(
        _ transport: ScriptedTransport, credential: String?, metrics: TestMetrics, clock: ManualClock = ManualClock(),
        maxAttempts: Int = 3, cache: (any ResponseCache)? = nil
    ) throws(GateError) -> RequestGate<String> {
        try RequestGate(
            transport: transport,
            credential: credential,
            configuration: GateConfiguration(
                retry: .automatic(.attempts(maxAttempts, backoff: .milliseconds(200))), jitterSeed: 1,
                telemetry: Telemetry(metrics: metrics)),
            cache: cache,
            clock: clock,
            authorize: { request, token in request.headerFields[.authorization] = "Bearer \(token)" },
            refresh: { _ in
                transport.accept("t1")
                return "t1"
            }
        )
    }

    static func get(_ path: String) -> HTTPRequest {
        HTTPRequest(method: .get, scheme: "https", authority: "example.test", path: path)
    }

    /// A request that needs a refresh first, one that fails at high priority.
    @Test func gateRequestsAreCountedByOutcomeAndPriorityAndRefreshesByOutcome() async throws {
        let metrics = TestMetrics()
        let transport = ScriptedTransport(valid: nil, script: [.ok, .notFound])
        let gate = try Self.makeGate(transport, credential: nil, metrics: metrics)
        _ = try await gate.send(Self.get("/a"))
        await #expect(throws: GateError.self) { try await gate.send(Self.get("/b"), priority: .high) }

        let requests = "conductor_gate_requests_total"
        #expect(
            try metrics.expectCounter(requests, [("outcome", "succeeded"), ("priority", "default")]).totalValue == 1)
        #expect(try metrics.expectCounter(requests, [("outcome", "failed"), ("priority", "high")]).totalValue == 1)
        #expect(try metrics.expectCounter("conductor_gate_refreshes_total", [("outcome", "succeeded")]).totalValue == 1)
        #expect(try metrics.expectCounter("conductor_gate_retries_total").totalValue == 0)
        // 0 from the gate's start, and never changed: nobody waited for a slot.
        #expect(try metrics.expectGauge("conductor_gate_queue_depth").values == [0])
    }

    @Test func retriesAndCacheFallbacksAreCounted() async throws {
        let metrics = TestMetrics()
        let clock = ManualClock()
        let transport = ScriptedTransport(valid: "t0", failures: 2)
        let gate = try Self.makeGate(
            transport, credential: "t0", metrics: metrics, clock: clock, maxAttempts: 2, cache: FixedCache())
        let sending = Task { try await gate.send(Self.get("/feed")) }
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(60))
        #expect(try await sending.value.isFromCache)

        #expect(try metrics.expectCounter("conductor_gate_retries_total").totalValue == 1)
        #expect(try metrics.expectCounter("conductor_gate_cache_fallbacks_total").totalValue == 1)
        let requests = "conductor_gate_requests_total"
        #expect(try metrics.expectCounter(requests, [("outcome", "cache"), ("priority", "default")]).totalValue == 1)
    }

    // MARK: - Harmonizer

    @Test func harmonizerOutcomesAreCounted() async throws {
        let metrics = TestMetrics()
        let telemetry = Telemetry(metrics: metrics)
        let clock = ManualClock()

        let completes = try Harmonizer(count: 1, telemetry: telemetry)
        #expect(completes.leave())
        _ = await completes.outcome
        let cancelled = try Harmonizer(participants: ["a"], telemetry: telemetry)
        #expect(cancelled.cancel())
        let registry = HarmonizerRegistry(clock: clock, telemetry: telemetry)
        let timesOut = try registry.create("lyrics", count: 1, timeout: .seconds(1), on: .immediate) { _ in }
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(1))
        _ = await timesOut.outcome

        let outcomes = "conductor_harmonizer_outcomes_total"
        #expect(try metrics.expectCounter(outcomes, [("outcome", "completed")]).totalValue == 1)
        #expect(try metrics.expectCounter(outcomes, [("outcome", "cancelled")]).totalValue == 1)
        #expect(try metrics.expectCounter(outcomes, [("outcome", "timed_out")]).totalValue == 1)
    }
}
