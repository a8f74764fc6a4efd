import Conductor
import ConductorTestKit
import HTTPTypes
import Synchronization
import Testing

/// Issue 14: no request on a dying credential, sign-in and sign-out, requests without
/// authorization, the refresh window, and the events that show them.
@Suite(.timeLimit(.minutes(1)))
struct GateCredentialTests {
    static let get = RequestGateTests.get

    static func gate(
        _ authority: MemoryAuthority,
        credential: String? = nil,
        clock: ManualClock = ManualClock(),
        configure: (inout GateConfiguration) -> Void = { _ in },
        refresh: (@Sendable (String?) async throws -> String)? = nil
    ) throws(GateError) -> RequestGate<String> {
        var configuration = GateConfiguration(jitterSeed: 1, eventRetention: 100_000)
        configure(&configuration)
        return try RequestGateTests.makeGate(
            authority, credential: credential, clock: clock, configuration: configuration, refresh: refresh)
    }

    // MARK: - No request on a dying credential

    /// The measurement of issue 14 §1, as a regression test: an instant transport that
    /// rejects the old token, 10 concurrent sends, 4 slots. Only requests that held a slot
    /// when the first rejection came back went out with the old token — never one submitted
    /// after `refreshStarted`.
    @Test(arguments: 0..<6) func noRequestGoesOutWithTheCredentialBeingReplaced(run: Int) async throws {
        let authority = MemoryAuthority(transport: MemoryTransport(validToken: nil))
        let gate = try Self.gate(authority, credential: "old") { $0.maxConcurrentRequests = 4 }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<10 { group.addTask { _ = try await gate.send(Self.get("/item/\(index)")) } }
            try await group.waitForAll()
        }
        let sends = authority.transport.sends
        #expect(sends.count { $0.token == "old" } <= 4, "run \(run): \(sends)")
        #expect(sends.count { $0.token == "t1" } == 10)
        #expect(authority.issued == 1)
        await RefreshInvariant.settle(gate)
        RefreshInvariant.check(
            gate.recordedEvents, startVersion: 1, credentialVersion: gate.credentialVersion,
            tokensIssued: authority.issued, context: "run \(run)")
    }

    @Test func refreshStartedNamesTheRequestWhoseRejectionStartedIt() async throws {
        let authority = MemoryAuthority(transport: MemoryTransport(validToken: nil))
        let gate = try Self.gate(authority, credential: "old")
        _ = try await gate.send(Self.get("/feed"))
        let started = gate.recordedEvents.compactMap { event -> UInt64? in
            if case .refreshStarted(1, let request) = event { request } else { nil }
        }
        #expect(started == [0])
    }

    /// An attempt that cannot start at once says so: here the refresh holds the scheduler's
    /// exclusive slot, so the second request waits for it.
    @Test func anAttemptWaitingForASlotIsAnEvent() async throws {
        let authority = MemoryAuthority(transport: MemoryTransport(validToken: nil))
        let (released, release) = AsyncStream<Void>.makeStream()
        let gate = try Self.gate(
            authority,
            refresh: { _ in
                for await _ in released { break }
                return try authority.refresh()
            })
        let first = Task { try await gate.send(Self.get("/first")) }
        var events = gate.events.makeAsyncIterator()
        while let event = await events.next() { if case .refreshStarted = event { break } }
        let second = Task { try await gate.send(Self.get("/second"), priority: .high) }
        while let event = await events.next() {
            if case .queued(let request, let priority) = event {
                #expect(request == 1 && priority == .high)
                break
            }
        }
        release.yield()
        _ = try await first.value
        _ = try await second.value
    }

    // MARK: - Sign-in, sign-out, anonymous requests

    /// A sign-in during a refresh cancels the refresh; the parked request goes out with the
    /// signed-in credential, and the refresh's late result is discarded.
    @Test func signInDuringARefreshWinsAndTheStaleRefreshIsDiscarded() async throws {
        let authority = MemoryAuthority(transport: MemoryTransport(validToken: nil))
        let (started, refreshStarted) = AsyncStream<Void>.makeStream()
        let (ended, refreshEnded) = AsyncStream<Bool>.makeStream()
        let gate = try Self.gate(
            authority, credential: "old",
            refresh: { _ in
                refreshStarted.yield()
                refreshEnded.yield((try? await Task.sleep(for: .seconds(3600))) == nil)
                return "stale"
            })
        let request = Task { try await gate.send(Self.get("/feed")) }
        var iterator = started.makeAsyncIterator()
        await iterator.next()
        authority.transport.state.withLock { $0.validToken = "fresh" }
        gate.signIn("fresh")
        _ = try await request.value
        #expect(authority.transport.sends.map(\.token) == ["old", "fresh"])
        #expect(gate.credentialVersion == 2)
        var endings = ended.makeAsyncIterator()
        #expect(await endings.next() == true, "the refresh was cancelled")
        let events = gate.recordedEvents
        #expect(events.contains(.refreshCancelled(fromVersion: 1)))
        #expect(events.contains(.signedIn(version: 2)))
        #expect(!events.contains { if case .refreshSucceeded = $0 { true } else { false } })
        RefreshInvariant.check(
            events, startVersion: 1, credentialVersion: gate.credentialVersion, tokensIssued: 0, context: "sign-in")
    }

    @Test func signOutFailsParkedRequestsOnceAndLaterOnesAtOnceButNotAnonymousOnes() async throws {
        let authority = MemoryAuthority(transport: MemoryTransport(validToken: nil))
        let (started, refreshStarted) = AsyncStream<Void>.makeStream()
        let gate = try Self.gate(
            authority, credential: "old",
            refresh: { _ in
                refreshStarted.yield()
                try await Task.sleep(for: .seconds(3600))
                return "never"
            })
        let parked = Task { try await gate.send(Self.get("/feed")) }
        var iterator = started.makeAsyncIterator()
        await iterator.next()
        gate.signOut()
        let error = await #expect(throws: GateError.self) { try await parked.value }
        #expect(error?.code == .signedOut)
        let later = await #expect(throws: GateError.self) { try await gate.send(Self.get("/later")) }
        #expect(later?.code == .signedOut)
        #expect(later?.message == "GET /later: signed out; the request needs a credential")
        // The login call itself needs no credential.
        authority.transport.state.withLock { $0.script = [] }
        let login = try await #require(throws: GateError.self) {
            try await gate.send(Self.get("/login"), authorization: .anonymous)
        }
        // The memory server rejects a request without a token: the anonymous request gets the
        // 401 as its answer instead of parking or refreshing.
        #expect(login.code == .rejected && login.status == 401)
        gate.signIn("new")
        authority.transport.state.withLock { $0.validToken = "new" }
        _ = try await gate.send(Self.get("/after"))
        let events = gate.recordedEvents
        #expect(events.contains(.signedOut) && events.contains(.refreshCancelled(fromVersion: 1)))
        #expect(authority.transport.sends.map(\.token) == ["old", nil, "new"])
        let failures = events.filter { if case .failure(_, .signedOut) = $0 { true } else { false } }
        #expect(failures.count == 1)
    }

    // MARK: - Shutdown

    @Test func shutdownCancelsARunningRefresh() async throws {
        let authority = MemoryAuthority(transport: MemoryTransport(validToken: nil))
        let (started, refreshStarted) = AsyncStream<Void>.makeStream()
        let (ended, refreshEnded) = AsyncStream<Bool>.makeStream()
        let gate = try Self.gate(
            authority, credential: "old",
            refresh: { _ in
                refreshStarted.yield()
                let cancelled = (try? await Task.sleep(for: .seconds(3600))) == nil
                refreshEnded.yield(cancelled)
                return "late"
            })
        let request = Task { try await gate.send(Self.get("/feed")) }
        var iterator = started.makeAsyncIterator()
        await iterator.next()
        gate.shutdown()
        let error = await #expect(throws: GateError.self) { try await request.value }
        #expect(error?.code == .shutDown)
        var endings = ended.makeAsyncIterator()
        #expect(await endings.next() == true)
        #expect(gate.credentialVersion == 1)
        #expect(gate.recordedEvents.contains(.refreshCancelled(fromVersion: 1)))
    }

    // MARK: - The refresh window

    /// A server that rejects every fresh token: at most N refreshes per window, every request
    /// ends once with `refreshWindowExceeded`, and refreshes resume after the window.
    @Test func aServerThatRejectsEveryTokenGetsAtMostNRefreshesPerWindow() async throws {
        let authority = MemoryAuthority(transport: MemoryTransport(validToken: nil))
        let clock = ManualClock()
        let refreshes = Atomic(0)
        let gate = try Self.gate(
            authority, credential: "t0", clock: clock,
            configure: {
                $0.retry.schedule = .attempts(10, backoff: .milliseconds(200))
                $0.refreshWindow = .init(maxRefreshes: 2, period: .seconds(60))
            },
            refresh: { _ in "rejected-\(refreshes.add(1, ordering: .relaxed).newValue)" })
        for index in 0..<3 {
            let error = await #expect(throws: GateError.self) { try await gate.send(Self.get("/\(index)")) }
            #expect(error?.code == .refreshWindowExceeded)
            #expect(
                error?.message
                    == "GET /\(index): the credential needs a refresh again after 2 refresh(es) within 60.00 s; "
                    + "no further refresh is allowed until the oldest leaves the window")
        }
        #expect(refreshes.load(ordering: .relaxed) == 2)
        clock.advance(by: .seconds(60))
        let error = await #expect(throws: GateError.self) { try await gate.send(Self.get("/later")) }
        #expect(error?.code == .refreshWindowExceeded)
        #expect(refreshes.load(ordering: .relaxed) == 4)
        let events = gate.recordedEvents
        let refused = events.filter { if case .refreshWindowExceeded(2, .seconds(60)) = $0 { true } else { false } }
        #expect(refused.count == 4)
        let ends = events.filter { if case .failure = $0 { true } else { false } }
        #expect(ends.count == 4)
        RefreshInvariant.check(
            events, startVersion: 1, credentialVersion: gate.credentialVersion, tokensIssued: 4, context: "window")
    }
}
