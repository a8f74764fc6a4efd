import Conductor
import ConductorTestKit
import HTTPTypes
import Synchronization
import Testing

/// The gate with an in-memory transport and a manual clock.
@Suite struct RequestGateTests {
    static func get(_ path: String) -> HTTPRequest {
        HTTPRequest(method: .get, scheme: "https", authority: "example.test", path: path)
    }

    static func makeGate(
        _ authority: MemoryAuthority,
        credential: String? = nil,
        clock: ManualClock = ManualClock(),
        configuration: GateConfiguration = GateConfiguration(jitterSeed: 1, eventRetention: 100_000),
        cache: (any ResponseCache)? = nil,
        refresh: (@Sendable (String?) async throws -> String)? = nil
    ) throws(GateError) -> RequestGate<String> {
        try RequestGate(
            transport: authority.transport,
            credential: credential,
            configuration: configuration,
            cache: cache,
            clock: clock,
            authorize: { request, token in request.headerFields[.authorization] = "Bearer \(token)" },
            refresh: refresh ?? { _ in try authority.refresh() }
        )
    }

    // MARK: - Credentials

    @Test func aRefreshStormOfTenThousandRequestsRefreshesOnce() async throws {
        let authority = MemoryAuthority(transport: MemoryTransport(validToken: nil))
        let gate = try Self.makeGate(authority, credential: "stale")
        let succeeded = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<10_000 {
                group.addTask { try await gate.send(Self.get("/item/\(index)")).response.status == .ok }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(succeeded == 10_000)
        #expect(authority.issued == 1)
        #expect(gate.credentialVersion == 2)
    }

    @Test func theFirstRequestWithoutACredentialRefreshesBeforeSending() async throws {
        let authority = MemoryAuthority(transport: MemoryTransport(validToken: nil))
        let gate = try Self.makeGate(authority)
        _ = try await gate.send(Self.get("/feed"))
        #expect(authority.transport.sends.map(\.token) == ["t1"])
    }

    @Test func requestsAfterARefreshCarryTheNewCredentialAndALaterExpiryRefreshesAgain() async throws {
        let authority = MemoryAuthority(transport: MemoryTransport(validToken: nil))
        let gate = try Self.makeGate(authority)
        _ = try await gate.send(Self.get("/a"))
        authority.expire()
        _ = try await gate.send(Self.get("/b"))
        #expect(authority.issued == 2)
        #expect(authority.transport.sends.map(\.token) == ["t1", "t1", "t2"])
    }

    @Test func aRefreshThatMissesItsDeadlineFailsTheParkedRequests() async throws {
        let clock = ManualClock()
        let authority = MemoryAuthority(transport: MemoryTransport(validToken: nil))
        let gate = try Self.makeGate(
            authority,
            clock: clock,
            refresh: { _ in
                try await Task.sleep(for: .seconds(3600))
                return "never"
            }
        )
        let request = Task { try await gate.send(Self.get("/feed")) }
        await clock.sleepers(atLeast: 1, for: .refreshTimeout)
        clock.advance(by: .seconds(30))
        let error = await #expect(throws: GateError.self) { try await request.value }
        #expect(error?.code == .refreshTimedOut)
        #expect(error?.message == "GET /feed: the credential refresh brought no credential within 30.00 s")
    }

    @Test func aCancelledParkedRequestReturnsAtOnceWhileTheRefreshGoesOnForTheOthers() async throws {
        let authority = MemoryAuthority(transport: MemoryTransport(validToken: nil))
        let (released, release) = AsyncStream<Void>.makeStream()
        let gate = try Self.makeGate(
            authority,
            refresh: { _ in
                for await _ in released { break }
                return try authority.refresh()
            }
        )
        let cancelled = Task { try await gate.send(Self.get("/cancelled")) }
        let kept = Task { try await gate.send(Self.get("/kept")) }
        var events = gate.events.makeAsyncIterator()
        var started = 0
        while started < 1, let event = await events.next() {
            if case .refreshStarted = event { started += 1 }
        }
        cancelled.cancel()
        let error = await #expect(throws: GateError.self) { try await cancelled.value }
        #expect(error?.code == .cancelled)
        release.yield()
        #expect(try await kept.value.response.status == .ok)
        #expect(authority.issued == 1)
    }

    // MARK: - Retries

    @Test func retryAfterIsHonouredAndCountsAgainstTheBudget() async throws {
        let clock = ManualClock()
        let authority = MemoryAuthority(transport: MemoryTransport(validToken: "t0"))
        authority.transport.state.withLock { $0.script = [.tooManyRequests, .serviceUnavailable, .serviceUnavailable] }
        let gate = try Self.makeGate(authority, credential: "t0", clock: clock)
        let request = Task { try await gate.send(Self.get("/feed")) }
        await clock.sleepers(atLeast: 1, for: .gateBackoff)
        clock.advance(by: .seconds(3))  // Retry-After: 3
        await clock.sleepers(atLeast: 1, for: .gateBackoff)
        clock.advance(by: .seconds(1))  // exponential backoff with jitter, below 200ms · 2
        let error = await #expect(throws: GateError.self) { try await request.value }
        #expect(error?.code == .retriesExhausted)
        #expect(error?.status == 503)
        #expect(authority.transport.sends.count == 3)
    }

    @Test func aRetryAfterBeyondTheCapEndsTheRequest() async throws {
        let authority = MemoryAuthority(transport: MemoryTransport(validToken: "t0"))
        authority.transport.state.withLock { $0.script = [.tooManyRequests] }
        var configuration = GateConfiguration(jitterSeed: 1)
        configuration.retry.retryAfter = .honoured(upTo: .seconds(2))
        let gate = try Self.makeGate(authority, credential: "t0", configuration: configuration)
        let error = await #expect(throws: GateError.self) { try await gate.send(Self.get("/feed")) }
        #expect(error?.code == .retriesExhausted)
        #expect(authority.transport.sends.count == 1)
    }

    @Test func aStreamedBodyIsNeverSentTwice() async throws {
        let authority = MemoryAuthority(transport: MemoryTransport(validToken: "t0"))
        authority.transport.state.withLock { $0.script = [.serviceUnavailable] }
        let gate = try Self.makeGate(authority, credential: "t0")
        let (chunks, continuation) = AsyncStream<[UInt8]>.makeStream()
        continuation.finish()
        let error = await #expect(throws: GateError.self) {
            try await gate.send(Self.get("/upload"), body: .stream(chunks))
        }
        #expect(error?.code == .bodyNotReplayable)
        #expect(authority.transport.sends.count == 1)
    }

    @Test func aNetworkFailureFallsBackToTheCacheOnce() async throws {
        let clock = ManualClock()
        let authority = MemoryAuthority(transport: MemoryTransport(validToken: "t0"))
        let cache = MemoryCache()
        var configuration = GateConfiguration(jitterSeed: 1, eventRetention: 100)
        configuration.retry.schedule = .attempts(1, backoff: .milliseconds(200))
        let gate = try Self.makeGate(
            authority, credential: "t0", clock: clock, configuration: configuration, cache: cache)
        let fresh = try await gate.send(Self.get("/feed"))
        #expect(!fresh.isFromCache)
        authority.transport.state.withLock { $0.failuresToThrow = 1 }
        let cached = try await gate.send(Self.get("/feed"))
        #expect(cached.isFromCache)
        #expect(cached.body == fresh.body)
        let ends = gate.recordedEvents.filter {
            switch $0 {
            case .success, .failure, .useCache: true
            default: false
            }
        }
        #expect(ends == [.success(request: 0, status: 200), .useCache(request: 1)])
    }

    @Test func aRejectedResponseFailsWithItsStatusAndNamesTheRequestWithoutItsQuery() async throws {
        let authority = MemoryAuthority(transport: MemoryTransport(validToken: "secret"))
        authority.transport.state.withLock { $0.script = [.notFound] }
        let gate = try Self.makeGate(authority, credential: "secret")
        let error = await #expect(throws: GateError.self) { try await gate.send(Self.get("/feed?token=secret")) }
        #expect(error?.code == .rejected)
        #expect(error?.message.contains("GET /feed") == true)
        #expect(error?.message.contains("secret") == false)
        #expect(gate.recordedEvents.allSatisfy { !$0.description.contains("secret") })
    }

    // MARK: - Shutdown

    @Test func shutdownEndsEveryPendingRequestOnce() async throws {
        let authority = MemoryAuthority(transport: MemoryTransport(validToken: nil))
        let (refreshing, refreshStarted) = AsyncStream<Void>.makeStream()
        let (released, _) = AsyncStream<Void>.makeStream()
        let gate = try Self.makeGate(
            authority,
            refresh: { _ in
                refreshStarted.yield()
                for await _ in released {}
                throw CancellationError()
            }
        )
        let first = Task { try await gate.send(Self.get("/first")) }
        for await _ in refreshing { break }
        // The refresh runs alone now, so every later request queues behind it.
        let later = (0..<19).map { index in Task { try await gate.send(Self.get("/\(index)")) } }
        let requests = [first] + later
        await gate.queuedAttempts(atLeast: 19)
        gate.shutdown()
        for request in requests {
            let error = await #expect(throws: GateError.self) { try await request.value }
            #expect(error?.code == .shutDown)
        }
        let failures = gate.recordedEvents.filter { if case .failure = $0 { true } else { false } }
        #expect(failures.count == 20)
        let late = await #expect(throws: GateError.self) { try await gate.send(Self.get("/late")) }
        #expect(late?.code == .shutDown)
    }

    // MARK: - Invariants under seeded interleavings

    /// Random expiries while requests are in flight: every request ends exactly once, the
    /// refreshes never outnumber the credential versions, and every success was last sent with
    /// a credential that was current when it was sent.
    @Test(arguments: StressConfiguration.seeds(default: 20, base: 0x6A7E_1001))
    func invariantsHoldUnderSeededRandomInterleavings(seed: UInt64) async throws {
        var generator = SeededGenerator(seed: seed)
        let authority = MemoryAuthority(transport: MemoryTransport(validToken: nil))
        var configuration = GateConfiguration(jitterSeed: seed, eventRetention: 100_000)
        configuration.maxConcurrentRequests = Int.random(in: 1...8, using: &generator)
        configuration.retry.schedule = .attempts(5, backoff: .milliseconds(200))
        let gate = try Self.makeGate(authority, configuration: configuration)
        let expiries = (0..<40).map { _ in Bool.random(using: &generator) && Bool.random(using: &generator) }
        let priorities = (0..<40).map { _ in
            [RequestPriority.low, .default, .high].randomElement(using: &generator)!
        }
        let outcomes = await withTaskGroup(of: Bool.self) { group in
            for index in 0..<40 {
                if expiries[index] { authority.expire() }
                group.addTask {
                    (try? await gate.send(Self.get("/\(index)"), priority: priorities[index])) != nil
                }
                if index % 7 == 0 { await Task.yield() }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(outcomes.count == 40)
        let events = gate.recordedEvents
        let ends = events.filter {
            switch $0 {
            case .success, .failure, .useCache: true
            default: false
            }
        }
        #expect(ends.count == 40)
        RefreshInvariant.check(
            events, startVersion: 0, credentialVersion: gate.credentialVersion, tokensIssued: authority.issued,
            context: "seed \(seed)")
        // Only expiries can fail a request; with no expiry after the last success nothing is stale.
        let sentTokens = Set(authority.transport.sends.compactMap(\.token))
        #expect(sentTokens.isSubset(of: Set((1...max(1, authority.issued)).map { "t\($0)" })))
    }
}

actor MemoryCache: ResponseCache {
    var entries: [String: GateResponse] = [:]
    func response(for request: HTTPRequest) -> GateResponse? { entries[request.path ?? ""] }
    func store(_ response: GateResponse, for request: HTTPRequest) { entries[request.path ?? ""] = response }
}
