import AsyncHTTPClient
import Conductor
import ConductorAsyncHTTPClient
import ConductorTestKit
import HTTPTypes
import InMemoryTracing
import NIOCore
import Testing
import Tracing

/// A ``RequestGate`` over the AsyncHTTPClient transport against the real loopback server:
/// the fault scenarios the URLSession transport's tests use — slow responses, a 401 storm,
/// 429 with `Retry-After`, resets, cancellation mid-body — and the trace context on the wire.
@Suite(.timeLimit(.minutes(1)))
struct AsyncHTTPClientGateTests {
    /// Forty requests are held by the server (one connection each), then all answered 401 at
    /// once (the token the gate holds is stale): one refresh, and every request succeeds with
    /// the new token.
    @Test func slowResponsesThatAllComeBack401RefreshOnceAndAllSucceed() async throws {
        let server = try await FaultServer.start()
        try await withClient(connectionsPerHost: 40) { client in
            let transport = try AsyncHTTPClientTransport(client: client, maxResponseBytes: 1 << 16)
            let gate = try server.gate(transport)
            let sends = Task {
                try await withThrowingTaskGroup(of: Int.self) { group in
                    for index in 0..<40 {
                        let request = server.request("/data/held-\(index)")
                        group.addTask { try await gate.send(request).response.status.code }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
            }
            await server.held(atLeast: 40)
            server.release.open()
            let statuses = try await sends.value
            #expect(statuses.count == 40 && statuses.allSatisfy { $0 == 200 })
            #expect(server.refreshRequests == 1)
            let lastToken = Dictionary(server.hits.map { ($0.path, $0.token) }, uniquingKeysWith: { $1 })
            #expect(lastToken.count == 40 && lastToken.values.allSatisfy { $0 == "t1" })
            gate.shutdown()
        }
        await server.stop()
    }

    /// 429 with `Retry-After: 0`, twice: the third attempt gets the 200.
    @Test func tooManyRequestsWithRetryAfterIsRetried() async throws {
        let server = try await FaultServer.start(busyAnswers: 2)
        try await withClient { client in
            let transport = try AsyncHTTPClientTransport(client: client, maxResponseBytes: 1 << 16)
            let gate = try server.gate(
                transport,
                GateConfiguration(retry: .automatic(.attempts(4, backoff: .zero, maxBackoff: .zero)), jitterSeed: 7))
            let reply = try await gate.send(server.request("/busy/1"))
            #expect(reply.response.status == .ok && reply.body == Array("/busy/1".utf8))
            #expect(server.hits.filter { $0.path == "/busy/1" }.count == 3)
            gate.shutdown()
        }
        await server.stop()
    }

    /// A connection reset after every response head: a GET is retried through its whole
    /// budget, then ends with the transport's error.
    @Test func aDroppedConnectionIsRetriedThroughTheBudget() async throws {
        let server = try await FaultServer.start()
        try await withClient { client in
            let transport = try AsyncHTTPClientTransport(client: client, maxResponseBytes: 1 << 16)
            var configuration = GateConfiguration(retry: .automatic(.attempts(3, backoff: .zero, maxBackoff: .zero)))
            configuration.refreshWindow = nil
            let gate = try server.gate(transport, configuration)
            let error = await #expect(throws: GateError.self) { try await gate.send(server.request("/drop/1")) }
            #expect(error?.code == .transport)
            #expect(server.hits.filter { $0.path == "/drop/1" }.count == 3)
            gate.shutdown()
        }
        await server.stop()
    }

    // MARK: - A server that is down

    /// Nothing listens on the port. With the client set up as the transport's docs say, each
    /// attempt fails at once with SwiftNIO's error for it, which is transient: the gate
    /// sends the GET through its budget, and the request ends `transport` with that error,
    /// naming the refused connection, as its cause. Nothing bounds an attempt here but the
    /// suite's time limit — no attempt timeout, no request timeout, a connect timeout of ten
    /// minutes — so a pool that kept trying to connect would hold the first attempt past it.
    @Test func aRefusedConnectionFailsEachAttemptAtOnce() async throws {
        let authority = try await closedPortAuthority()
        try await withClient(connectTimeout: .minutes(10)) { client in
            let transport = try AsyncHTTPClientTransport(client: client, maxResponseBytes: 1 << 16)
            let gate = try Self.gate(
                transport, GateConfiguration(retry: .automatic(.attempts(3, backoff: .zero, maxBackoff: .zero))))
            let down = HTTPRequest(method: .get, scheme: "http", authority: authority, path: "/down")
            let error = await #expect(throws: GateError.self) { try await gate.send(down) }
            #expect(error?.code == .transport)
            #expect(
                error?.message.hasPrefix("GET /down: transport failed after 3 attempt(s): ") == true,
                "\(error?.message ?? "")")
            let cause = try #require(error?.underlyingError)
            #expect(isARefusedConnection(cause), "\(type(of: cause)): \(cause)")
            gate.shutdown()
        }
    }

    /// The request's deadline runs out while the gate backs off after a refused connection
    /// (the gate's clock is manual: the test moves it past the deadline once the backoff
    /// sleeps): the request ends `timedOut`, and keeps what its last attempt threw as its
    /// cause, in the message and as the underlying error.
    @Test func aRequestThatTimesOutKeepsItsLastAttemptsCause() async throws {
        let authority = try await closedPortAuthority()
        let clock = ManualClock()
        try await withClient { client in
            let transport = try AsyncHTTPClientTransport(client: client, maxResponseBytes: 1 << 16)
            let gate = try Self.gate(
                transport,
                GateConfiguration(
                    retry: .automatic(.attempts(3, backoff: .seconds(60), maxBackoff: .seconds(60))),
                    requestTimeout: .seconds(5)),
                clock: clock)
            let down = HTTPRequest(method: .get, scheme: "http", authority: authority, path: "/down")
            let send = Task { try await gate.send(down) }
            await clock.sleepers(atLeast: 1, for: .gateBackoff)
            clock.advance(by: .seconds(5))
            let error = await #expect(throws: GateError.self) { try await send.value }
            #expect(error?.code == .timedOut)
            #expect(
                error?.message.hasPrefix("GET /down timed out after 5.00 s; the last finished attempt failed: ")
                    == true,
                "\(error?.message ?? "")")
            let cause = try #require(error?.underlyingError)
            #expect(isARefusedConnection(cause), "\(type(of: cause)): \(cause)")
            gate.shutdown()
        }
    }

    /// A gate that needs no server for its credential.
    private static func gate(
        _ transport: AsyncHTTPClientTransport, _ configuration: GateConfiguration,
        clock: some Clock<Duration> = ContinuousClock()
    ) throws -> RequestGate<String> {
        try RequestGate<String>(
            transport: transport, credential: "c", configuration: configuration, clock: clock,
            authorize: { request, token in request.headerFields[.authorization] = "Bearer \(token)" },
            refresh: { _ in "c" })
    }

    /// Cancelling the caller while the body is half sent ends the request `cancelled` before
    /// the server sends the rest, and the gate goes on serving.
    @Test func cancellingACallerMidBodyEndsItsRequestAtOnce() async throws {
        let server = try await FaultServer.start()
        try await withClient { client in
            let transport = try AsyncHTTPClientTransport(client: client, maxResponseBytes: 1 << 16)
            let gate = try server.gate(transport)
            let send = Task { try await gate.send(server.request("/dribble/1")) }
            await server.firstChunkSent.wait()
            send.cancel()
            let error = await #expect(throws: GateError.self) { try await send.value }
            #expect(error?.code == .cancelled)
            #expect(!server.release.isOpen)
            server.release.open()
            #expect(try await gate.send(server.request("/public/after")).response.status == .ok)
            gate.shutdown()
        }
        await server.stop()
    }

    // MARK: - Trace context
    // Against `WireRecorder`, which keeps each request head as it came off the wire:
    // FlyingFox folds a repeated field into one and could not see a second `traceparent`.

    /// With the client's tracing off (the configuration the transport recommends), the request
    /// carries exactly one `traceparent` — the gate's request span — and the trace has one
    /// client span.
    @Test func oneTraceparentAndOneClientSpanWhenTheClientDoesNotTrace() async throws {
        let wire = try await WireRecorder.start()
        let tracer = W3CTestTracer()
        try await withClient(tracer: nil) { client in
            let transport = try AsyncHTTPClientTransport(client: client, maxResponseBytes: 1 << 16)
            let gate = try RequestGate<String>(
                transport: transport, credential: "c",
                configuration: GateConfiguration(telemetry: Telemetry(tracer: tracer)),
                authorize: { request, token in request.headerFields[.authorization] = "Bearer \(token)" },
                refresh: { _ in "c" })
            _ = try await gate.send(
                HTTPRequest(method: .get, scheme: "http", authority: wire.authority, path: "/traced"))
            gate.shutdown()
        }
        let head = try #require(wire.receivedHeads.first)
        let clientSpans = tracer.finishedSpans.filter { $0.kind == .client }
        #expect(clientSpans.count == 1, "\(clientSpans.map(\.operationName))")
        #expect(
            WireRecorder.values(of: "traceparent", in: head)
                == clientSpans.map { W3CTestTracer.traceparent($0.spanContext) }, "\(head)")
        try await wire.stop()
    }

    /// With a client that traces too (AsyncHTTPClient's default when a tracer is bootstrapped),
    /// the gate's field steps aside: the request still carries one `traceparent`, the
    /// client's span, which is a child of the gate's request span in the same trace.
    @Test func oneTraceparentWhenTheClientTracesToo() async throws {
        let wire = try await WireRecorder.start()
        let tracer = W3CTestTracer()
        try await withClient(tracer: tracer) { client in
            let transport = try AsyncHTTPClientTransport(client: client, maxResponseBytes: 1 << 16)
            let gate = try RequestGate<String>(
                transport: transport, credential: "c",
                configuration: GateConfiguration(telemetry: Telemetry(tracer: tracer)),
                authorize: { request, token in request.headerFields[.authorization] = "Bearer \(token)" },
                refresh: { _ in "c" })
            _ = try await gate.send(
                HTTPRequest(method: .get, scheme: "http", authority: wire.authority, path: "/traced"))
            gate.shutdown()
        }
        let head = try #require(wire.receivedHeads.first)
        let spans = tracer.finishedSpans.filter { $0.operationName == "GET" }
        let gateSpan = try #require(spans.first { $0.parentSpanID == nil })
        let clientSpan = try #require(spans.first { $0.parentSpanID == gateSpan.spanID })
        #expect(clientSpan.traceID == gateSpan.traceID)
        #expect(
            WireRecorder.values(of: "traceparent", in: head) == [W3CTestTracer.traceparent(clientSpan.spanContext)],
            "\(head)")
        try await wire.stop()
    }
}
