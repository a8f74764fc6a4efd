import Conductor
import ConductorTestKit
import HTTPTypes
import InMemoryTracing
import Instrumentation
import Testing
import Tracing

/// The gate's spans, each test with its own `InMemoryTracer` and a scripted in-memory
/// transport; time only moves when a test advances its manual clock.
@Suite struct GateTracingTests {
    static let secret = "s3cret-token"

    static func makeGate(
        _ transport: ScriptedTransport,
        credential: String? = secret,
        tracer: InMemoryTracer,
        clock: ManualClock = ManualClock(),
        maxAttempts: Int = 3,
        cache: (any ResponseCache)? = nil,
        refresh: @escaping @Sendable (String?) async throws -> String = { _ in "unused" }
    ) throws(GateError) -> RequestGate<String> {
        try RequestGate(
            transport: transport,
            credential: credential,
            configuration: GateConfiguration(
                retry: .automatic(.attempts(maxAttempts, backoff: .milliseconds(200))), jitterSeed: 1,
                telemetry: Telemetry(tracer: tracer)),
            cache: cache,
            clock: clock,
            authorize: { request, token in request.headerFields[.authorization] = "Bearer \(token)" },
            refresh: refresh
        )
    }

    static func get(_ path: String) -> HTTPRequest {
        HTTPRequest(method: .get, scheme: "https", authority: "example.test", path: path)
    }

    // MARK: - One request

    /// A request is a client span under the caller's span, with an event per state; the
    /// transport receives its context in the header fields; no attribute holds the
    /// credential or the query.
    @Test func aRequestIsAClientSpanWhoseContextReachesTheTransport() async throws {
        let tracer = InMemoryTracer()
        let transport = ScriptedTransport(valid: Self.secret)
        let gate = try Self.makeGate(transport, tracer: tracer)
        let caller = tracer.startSpan("caller")
        let reply = try await ServiceContext.withValue(caller.context) {
            try await gate.send(Self.get("/feed?session=q-secret"))
        }
        caller.end()
        #expect(reply.response.status == .ok)

        let spans = tracer.finishedSpans
        let request = try spans.one("GET")
        #expect(request.kind == .client)
        #expect(request.parentSpanID == caller.context.inMemorySpanContext?.spanID)
        #expect(request.events.map(\.name) == ["initial", "running"])
        #expect(request.string("http.request.method") == "GET")
        #expect(request.string("conductor.gate.request") == "GET /feed")
        #expect(request.string("conductor.gate.priority") == "default")
        #expect(request.string("conductor.gate.outcome") == "succeeded")
        #expect(request.int("http.response.status_code") == 200)
        #expect(request.status == nil)

        let sent = try #require(transport.requests.first)
        #expect(sent.headerFields[HTTPField.Name(InMemoryTracer.traceIDKey)!] == request.traceID)
        #expect(sent.headerFields[HTTPField.Name(InMemoryTracer.spanIDKey)!] == request.spanID)
        for text in spans.flatMap(\.allAttributeText) {
            #expect(!text.contains(Self.secret), "\(text)")
            #expect(!text.contains("q-secret"), "\(text)")
        }
    }

    /// A request that fails records the error and an error status.
    @Test func aFailedRequestIsAnErrorSpan() async throws {
        let tracer = InMemoryTracer()
        let transport = ScriptedTransport(valid: Self.secret, script: [.internalServerError])
        let gate = try Self.makeGate(transport, tracer: tracer, maxAttempts: 1)
        await #expect(throws: GateError.self) { try await gate.send(Self.get("/feed")) }

        let request = try tracer.finishedSpans.one("GET")
        #expect(request.string("conductor.gate.outcome") == "failed")
        #expect(request.string("conductor.gate.error_code") == "\(GateError.Code.retriesExhausted)")
        #expect(request.status?.code == .error)
        #expect(request.errors.first?.error is GateError)
    }

    /// A transport failure, a retry after the backoff (on the manual clock), a second failure,
    /// then the cache's answer: each state an event, the outcome `cache`.
    @Test func retriesAndTheCacheFallbackAreEvents() async throws {
        let tracer = InMemoryTracer()
        let clock = ManualClock()
        let transport = ScriptedTransport(valid: Self.secret, failures: 2)
        let gate = try Self.makeGate(transport, tracer: tracer, clock: clock, maxAttempts: 2, cache: FixedCache())
        let sending = Task { try await gate.send(Self.get("/feed")) }
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(60))
        let reply = try await sending.value
        #expect(reply.isFromCache)

        let request = try tracer.finishedSpans.one("GET")
        #expect(request.events.map(\.name) == ["initial", "running", "retry", "running", "use-cache"])
        #expect(request.string("conductor.gate.outcome") == "cache")
        #expect(transport.requests.count == 2)
    }

    /// A caller coalesced onto another's flight gets a span of its own, ended with its
    /// answer; the flight's events and the header belong to the caller that started it.
    @Test func aCoalescedCallerHasASpanOfItsOwn() async throws {
        let tracer = InMemoryTracer()
        let transport = LatchedTransport(ScriptedTransport(valid: Self.secret))
        let gate = try RequestGate(
            transport: transport,
            credential: Self.secret,
            configuration: GateConfiguration(jitterSeed: 1, telemetry: Telemetry(tracer: tracer)),
            clock: ManualClock(),
            authorize: { request, token in request.headerFields[.authorization] = "Bearer \(token)" },
            refresh: { _ in "unused" }
        )
        let first = Task { try await gate.send(Self.get("/feed"), coalescingKey: "feed") }
        for await event in gate.events {
            if case .running = event { break }
        }
        let second = Task { try await gate.send(Self.get("/feed"), coalescingKey: "feed") }
        for await event in gate.events {
            if case .coalesced = event { break }
        }
        transport.release.open()
        _ = try await (first.value, second.value)

        let requests = tracer.finishedSpans.named("GET")
        #expect(requests.count == 2)
        #expect(requests.map(\.events.count).sorted() == [1, 2])  // ["initial"], ["initial", "running"]
        #expect(requests.allSatisfy { $0.string("conductor.gate.outcome") == "succeeded" })
        #expect(transport.inner.requests.count == 1)
    }

    // MARK: - The refresh

    /// Two requests park behind one refresh: the refresh is a span of its own (a child of the
    /// request that started it, and the context the user's refresh runs in), and each request
    /// it released links to it.
    @Test func aRefreshIsASpanAndEveryRequestItReleasedLinksToIt() async throws {
        let tracer = InMemoryTracer()
        let transport = ScriptedTransport(valid: nil)
        let release = Latch()
        let contextInRefresh = Recorder<String?>()
        let gate = try Self.makeGate(transport, credential: nil, tracer: tracer) { _ in
            contextInRefresh.append(ServiceContext.current?.inMemorySpanContext?.spanID)
            await release.wait()
            transport.accept("n3w-t0ken")
            return "n3w-t0ken"
        }
        let sends = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for path in ["/a", "/b"] { group.addTask { _ = try await gate.send(Self.get(path)) } }
                try await group.waitForAll()
            }
        }
        var redirects = 0
        for await event in gate.events {
            if case .parked = event { redirects += 1 }
            if redirects == 2 { break }
        }
        release.open()
        try await sends.value

        let spans = tracer.finishedSpans
        let refresh = try spans.one("gate.refresh")
        #expect(refresh.string("conductor.gate.outcome") == "succeeded")
        #expect(contextInRefresh.all == [refresh.spanID])
        let requests = spans.named("GET")
        #expect(requests.count == 2)
        #expect(requests.contains { $0.spanID == refresh.parentSpanID })
        for request in requests {
            #expect(request.links.map { $0.context.inMemorySpanContext?.spanID } == [refresh.spanID])
            #expect(request.events.map(\.name) == ["initial", "parked", "running"])
            #expect(request.string("conductor.gate.outcome") == "succeeded")
        }
        #expect(transport.requests.allSatisfy { $0.headerFields[.authorization] == "Bearer n3w-t0ken" })
        for text in spans.flatMap(\.allAttributeText) { #expect(!text.contains("n3w-t0ken"), "\(text)") }
    }
}
