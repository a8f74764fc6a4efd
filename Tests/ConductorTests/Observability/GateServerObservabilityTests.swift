import Conductor
import ConductorTestKit
import CoreMetrics
import Foundation
import HTTPTypes
import InMemoryTracing
import Logging
import MetricsTestKit
import Testing
import Tracing

/// What a server reads of a gate: its queue-depth gauge, request durations, and log lines that
/// name the request, the reason and the incoming request that caused it.
@Suite struct GateServerObservabilityTests {
    static func makeGate(
        _ transport: some GateTransport, clock: ManualClock, metrics: TestMetrics? = nil, logger: Logger? = nil,
        tracer: InMemoryTracer? = nil, maxConcurrentRequests: Int? = nil, maxAttempts: Int = 3
    ) throws(GateError) -> RequestGate<String> {
        let telemetry = Telemetry(
            tracer: tracer ?? NoOpTracer(), metrics: metrics ?? NOOPMetricsHandler.instance)
        return try RequestGate(
            transport: transport,
            credential: "t0",
            configuration: GateConfiguration(
                maxConcurrentRequests: maxConcurrentRequests,
                retry: .automatic(.attempts(maxAttempts, backoff: .milliseconds(200))), jitterSeed: 1,
                telemetry: telemetry),
            clock: clock,
            logger: logger,
            authorize: { request, token in request.headerFields[.authorization] = "Bearer \(token)" },
            refresh: { _ in "t0" }
        )
    }

    /// Waits until the gate has sent an attempt.
    static func firstRunning(_ gate: RequestGate<String>) async {
        for await event in gate.events {
            if case .running = event { return }
        }
    }

    // MARK: - Queue depth

    /// A burst behind one slot whose requests leave the queue by cancel, by timeout and by
    /// shutdown: the gauge follows every change and ends at 0. (It used to be recorded only
    /// when a request queued or started, so it stood at 4, the depth of the last to queue.)
    @Test func theQueueDepthGaugeEndsAtZeroWhicheverWayRequestsLeaveTheQueue() async throws {
        let metrics = TestMetrics()
        let clock = ManualClock()
        let transport = LatchedTransport(ScriptedTransport(valid: "t0"))
        let gate = try Self.makeGate(transport, clock: clock, metrics: metrics, maxConcurrentRequests: 1)
        let holder = Task { try await gate.send(MetricsTests.get("/holder")) }
        await Self.firstRunning(gate)
        // One at a time, so each queues after the last one's figures are recorded.
        let cancelled = Task { try await gate.send(MetricsTests.get("/cancelled")) }
        await gate.queuedAttempts(atLeast: 1)
        let timedOut = Task { try await gate.send(MetricsTests.get("/timed-out"), timeout: .seconds(1)) }
        await gate.queuedAttempts(atLeast: 2)
        let shutDown = Task { try await gate.send(MetricsTests.get("/shut-down-1")) }
        await gate.queuedAttempts(atLeast: 3)
        let shutDownToo = Task { try await gate.send(MetricsTests.get("/shut-down-2")) }
        await gate.queuedAttempts(atLeast: 4)
        let gauge = try metrics.expectGauge("conductor_gate_queue_depth")
        #expect(gauge.lastValue == 4)

        cancelled.cancel()
        await #expect(throws: GateError.self) { try await cancelled.value }
        #expect(gauge.lastValue == 3)
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(1))
        await #expect(throws: GateError.self) { try await timedOut.value }
        #expect(gauge.lastValue == 2)
        gate.shutdown()
        #expect(gauge.lastValue == 0)
        #expect(gauge.values == [0, 1, 2, 3, 4, 3, 2, 0])

        transport.release.open()
        for task in [holder, shutDown, shutDownToo] {
            await #expect(throws: GateError.self) { try await task.value }
        }
        #expect(gauge.lastValue == 0)
    }

    // MARK: - Request duration

    /// Each caller's `send` is timed on the gate's clock, by outcome: `success`, or the error's
    /// code in snake case.
    @Test func requestDurationsAreTimedByOutcome() async throws {
        let metrics = TestMetrics()
        let clock = ManualClock()
        let transport = ScriptedTransport(valid: "t0", script: [.ok, .notFound], failures: 1)
        let gate = try Self.makeGate(transport, clock: clock, metrics: metrics)
        // Fails once on the wire, then succeeds after the backoff.
        let retried = Task { try await gate.send(MetricsTests.get("/retried")) }
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(5))
        _ = try await retried.value
        await #expect(throws: GateError.self) { try await gate.send(MetricsTests.get("/missing")) }
        gate.shutdown()
        await #expect(throws: GateError.self) { try await gate.send(MetricsTests.get("/late")) }

        let label = "conductor_gate_request_duration_seconds"
        #expect(try metrics.expectTimer(label, [("outcome", "success")]).values == [5_000_000_000])
        #expect(try metrics.expectTimer(label, [("outcome", "rejected")]).values == [0])
        #expect(try metrics.expectTimer(label, [("outcome", "shut_down")]).values == [0])
    }

    // MARK: - Log lines

    /// A request that fails on the wire twice: its retry and its failure lines name the method,
    /// host and path (never the query) and the reason, and every line of it carries the
    /// caller's metadata — so does its span.
    @Test func retryAndFailureLinesNameTheRequestTheReasonAndTheCallersMetadata() async throws {
        let handler = CapturingLogHandler()
        let tracer = InMemoryTracer()
        let clock = ManualClock()
        let transport = ScriptedTransport(valid: "t0", failures: 2)
        let gate = try Self.makeGate(
            transport, clock: clock, logger: Logger(label: "gate") { _ in handler }, tracer: tracer, maxAttempts: 2)
        let request = HTTPRequest(
            method: .get, scheme: "https", authority: "user:pw@api.example.test", path: "/feed?token=q-secret")
        let sending = Task { try await gate.send(request, metadata: ["request_id": "in-42"]) }
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(5))
        let error = try await #require(throws: GateError.self) { try await sending.value }
        #expect(error.code == .transport)

        let lines = handler.lines.all
        #expect(!lines.isEmpty)
        for line in lines {
            #expect(line.metadata["request_id"] == "in-42", "\(line.message)")
            #expect(!"\(line.message) \(line.metadata)".contains("q-secret"))
            #expect(!"\(line.metadata)".contains("user:pw"))
        }
        let retry = try #require(lines.first { $0.message == "request retrying" })
        #expect(retry.level == .notice)
        #expect(retry.metadata["method"] == "GET")
        #expect(retry.metadata["host"] == "api.example.test")
        #expect(retry.metadata["path"] == "/feed")
        #expect("\(retry.metadata["reason"] ?? "")".hasPrefix("transport error: "))
        let failure = try #require(lines.first { $0.message == "request failed" })
        #expect(failure.level == .notice)
        #expect(failure.metadata["code"] == "transport")
        #expect(failure.metadata["path"] == "/feed")
        #expect(failure.metadata["reason"] == "\(error.message)")

        #expect(try tracer.finishedSpans.one("GET").string("request_id") == "in-42")
    }

    /// A `URLError` carries its failing URL, query and user information included, and
    /// `"\(error)"` prints it: the retry line's reason, the failure line and the error's message
    /// name the error by its code instead, while `underlyingError` keeps it whole.
    @Test func aTransportErrorsFailingURLStaysOutOfLinesAndMessages() async throws {
        let handler = CapturingLogHandler()
        let clock = ManualClock()
        let url = "https://user:pw@api.example.test/feed?token=q-secret"
        let thrown = URLError(.cannotParseResponse, userInfo: [NSURLErrorFailingURLStringErrorKey: url])
        #expect("\(thrown)".contains("q-secret"), "the leak this test guards against")
        let gate = try Self.makeGate(
            ThrowingTransport(error: thrown), clock: clock, logger: Logger(label: "gate") { _ in handler },
            maxAttempts: 2)
        let sending = Task { try await gate.send(MetricsTests.get("/feed")) }
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(5))
        let error = try await #require(throws: GateError.self) { try await sending.value }
        #expect(error.message == "GET /feed: transport failed after 2 attempt(s): URLError -1017")
        #expect((error.underlyingError as? URLError)?.userInfo[NSURLErrorFailingURLStringErrorKey] as? String == url)
        let lines = handler.lines.all
        #expect(lines.contains { $0.metadata["reason"] == "transport error: URLError -1017" })
        for line in lines {
            #expect(!"\(line.message) \(line.metadata)".contains("q-secret"), "\(line.message)")
        }
    }

    /// A caller's own cancel is no incident: its line is at `debug`, not `notice`.
    @Test func aCallersCancelIsLoggedAtDebug() async throws {
        let handler = CapturingLogHandler()
        let transport = LatchedTransport(ScriptedTransport(valid: "t0"))
        let gate = try Self.makeGate(
            transport, clock: ManualClock(), logger: Logger(label: "gate") { _ in handler })
        let sending = Task { try await gate.send(MetricsTests.get("/slow"), metadata: ["request_id": "in-7"]) }
        await Self.firstRunning(gate)
        sending.cancel()
        let error = try await #require(throws: GateError.self) { try await sending.value }
        #expect(error.code == .cancelled)
        transport.release.open()

        let failure = try #require(handler.lines.all.first { $0.message == "request failed" })
        #expect(failure.level == .debug)
        #expect(failure.metadata["code"] == "cancelled")
        #expect(failure.metadata["request_id"] == "in-7")
        #expect(!handler.lines.all.contains { $0.level >= .notice })
    }
}

/// A transport whose every send throws `error`.
private struct ThrowingTransport: GateTransport {
    let error: URLError

    func send(_ request: HTTPRequest, body: GateRequestBody?) async throws -> GateTransportResponse {
        throw error
    }

    func classify(_ error: any Error) -> TransportFailure { .transient }
}
