import Conductor
import ConductorTestKit
import HTTPTypes
import Logging
import Synchronization
import Testing

/// What a user can bet on: retries that never repeat what the server may have done, a refresh
/// before a credential known to be stale goes out, errors that keep their cause and status, and
/// a default that cannot storm. Each test here failed before the behaviour it pins existed.
@Suite(.timeLimit(.minutes(1)))
struct GateCorrectnessTests {
    /// Answers each send with the next step of its script (then 200), records what it received,
    /// and calls `Permanent` errors permanent.
    final class ScriptedSends: GateTransport {
        enum Step: Sendable {
            case status(HTTPResponse.Status)
            case fail(any Error)
        }

        struct Permanent: Error {}
        struct Transient: Error {}

        private let state: Lock<(script: [Step], sends: [(method: String, token: String?)])>

        init(_ script: [Step]) { state = Lock((script, [])) }

        var sends: [(method: String, token: String?)] { state.withLock { $0.sends } }

        func send(_ request: HTTPRequest, body: GateRequestBody?) async throws -> GateTransportResponse {
            let token = request.headerFields[.authorization].map { String($0.dropFirst("Bearer ".count)) }
            let step = state.withLock { state -> Step in
                state.sends.append((request.method.rawValue, token))
                return state.script.isEmpty ? .status(.ok) : state.script.removeFirst()
            }
            switch step {
            case .status(let status): return GateTransportResponse(response: HTTPResponse(status: status), body: [])
            case .fail(let error): throw error
            }
        }

        func classify(_ error: any Error) -> TransportFailure {
            error is Permanent ? .permanent : .transient
        }
    }

    static func gate(
        _ transport: some GateTransport,
        credential: String? = "t0",
        clock: ManualClock = ManualClock(),
        maxAttempts: Int = 3,
        window: GateConfiguration.RefreshWindow? = .default,
        requiresRefresh: (@Sendable (String, ManualClock.Instant) -> Bool)? = nil,
        refresh: @escaping @Sendable (String?) async throws -> String = { _ in "t1" }
    ) throws(GateError) -> RequestGate<String> {
        var configuration = GateConfiguration(
            retry: .automatic(.attempts(maxAttempts, backoff: .zero, maxBackoff: .zero)), jitterSeed: 1,
            eventRetention: 10_000)
        configuration.refreshWindow = window
        return try RequestGate(
            transport: transport, credential: credential, configuration: configuration, clock: clock,
            authorize: { request, token in request.headerFields[.authorization] = "Bearer \(token)" },
            requiresRefresh: requiresRefresh, refresh: refresh)
    }

    static func request(_ method: HTTPRequest.Method, _ path: String = "/orders") -> HTTPRequest {
        HTTPRequest(method: method, scheme: "https", authority: "example.test", path: path)
    }

    // MARK: - Retries that are safe

    /// A POST that failed on the network may have been carried out: it is sent once, and the
    /// error says why it was not retried, keeping the transport's error.
    @Test func aPostThatFailsOnTheNetworkIsNotSentAgain() async throws {
        let transport = ScriptedSends([.fail(ScriptedSends.Transient())])
        let gate = try Self.gate(transport)
        let error = await #expect(throws: GateError.self) { try await gate.send(Self.request(.post)) }
        #expect(error?.code == .transport)
        #expect(
            error?.message.hasPrefix(
                "POST /orders: transport failed after 1 attempt(s), not retried: POST is not idempotent") == true)
        #expect(error?.underlyingError is ScriptedSends.Transient)
        #expect(transport.sends.count == 1)
    }

    /// A 503 on a PATCH is not retried either: the "retry" verdict follows the same rule.
    @Test func aRetryVerdictOnAPatchEndsTheRequest() async throws {
        let transport = ScriptedSends([.status(.serviceUnavailable)])
        let gate = try Self.gate(transport)
        let error = await #expect(throws: GateError.self) { try await gate.send(Self.request(.patch)) }
        #expect(error?.code == .retriesExhausted)
        #expect(error?.status == 503)
        #expect(
            error?.message
                == "PATCH /orders: gave up after 1 attempt(s); last: status 503; not retried: PATCH is not idempotent")
        #expect(transport.sends.count == 1)
    }

    /// Idempotent methods, an `Idempotency-Key`, and `.always()` are retried as before.
    @Test func idempotentRequestsAndRequestsThatOptInAreRetried() async throws {
        var keyed = Self.request(.post)
        keyed.headerFields[HTTPField.Name("Idempotency-Key")!] = "order-42"
        for (request, policy) in [
            (Self.request(.get), RequestRetryPolicy.automatic), (Self.request(.put), .automatic),
            (keyed, .automatic), (Self.request(.post), .always()),
        ] {
            let transport = ScriptedSends([.fail(ScriptedSends.Transient()), .status(.serviceUnavailable)])
            let gate = try Self.gate(transport)
            let response = try await gate.send(request, retry: policy)
            #expect(response.response.status == .ok, "\(request.method) \(policy)")
            #expect(transport.sends.count == 3, "\(request.method) \(policy)")
        }
    }

    /// An error the transport calls permanent fails at once, even for a GET.
    @Test func aPermanentTransportErrorIsNotRetried() async throws {
        let transport = ScriptedSends([.fail(ScriptedSends.Permanent())])
        let gate = try Self.gate(transport)
        let error = await #expect(throws: GateError.self) { try await gate.send(Self.request(.get)) }
        #expect(error?.code == .transport)
        #expect(error?.message.contains("not retried: the error is permanent") == true)
        #expect(error?.underlyingError is ScriptedSends.Permanent)
        #expect(transport.sends.count == 1)
    }

    /// A request's own policy overrides the gate's budget, or turns retries off.
    @Test func aRequestsRetryPolicyOverridesTheGatesBudget() async throws {
        let failures = [ScriptedSends.Step](repeating: .fail(ScriptedSends.Transient()), count: 5)
        let more = ScriptedSends(failures)
        let gate = try Self.gate(more, maxAttempts: 2)
        let response = try await gate.send(
            Self.request(.get), retry: .automatic(.attempts(6, backoff: .zero, maxBackoff: .zero)))
        #expect(response.response.status == .ok)
        #expect(more.sends.count == 6)

        let none = ScriptedSends(failures)
        let once = try Self.gate(none)
        let error = await #expect(throws: GateError.self) { try await once.send(Self.request(.get), retry: .never) }
        #expect(error?.message.contains("not retried: its retry policy is never") == true)
        #expect(none.sends.count == 1)
    }

    /// A 429 with Retry-After follows the same rule: a POST is not sent again unless it opts
    /// in, and then it waits for as long as the server asked.
    @Test func aRetryAfterOnAPostIsHonouredOnlyWhenThePostOptsIn() async throws {
        let transport = MemoryTransport(validToken: "t0")
        transport.state.withLock { $0.script = [.tooManyRequests] }
        let clock = ManualClock()
        let gate = try Self.gate(transport, clock: clock)
        let error = await #expect(throws: GateError.self) { try await gate.send(Self.request(.post)) }
        #expect(error?.code == .retriesExhausted)
        #expect(error?.status == 429)
        #expect(error?.message.contains("not retried: POST is not idempotent") == true)
        #expect(transport.sends.count == 1)

        transport.state.withLock { $0.script = [.tooManyRequests] }
        let optedIn = Task { try await gate.send(Self.request(.post), retry: .always()) }
        await clock.sleepers(atLeast: 1, for: .gateBackoff)
        #expect(transport.sends.count == 2)
        clock.advance(by: .seconds(3))  // Retry-After: 3
        #expect(try await optedIn.value.response.status == .ok)
        #expect(transport.sends.count == 3)
    }

    /// A rejected credential means the server did nothing: a POST is sent again after the
    /// refresh, whatever its retry policy.
    @Test func aPostWhoseCredentialWasRejectedIsSentAgainAfterTheRefresh() async throws {
        let transport = ScriptedSends([.status(.unauthorized)])
        let gate = try Self.gate(transport)
        let response = try await gate.send(Self.request(.post), retry: .never)
        #expect(response.response.status == .ok)
        #expect(transport.sends.map(\.token) == ["t0", "t1"])
    }

    // MARK: - Refresh before sending

    /// The first request that finds the credential stale refreshes before sending it; the
    /// server never sees the stale credential, and requests behind it park, then send the new one.
    @Test func aCredentialJudgedStaleIsRefreshedBeforeItIsSent() async throws {
        let transport = ScriptedSends([])
        let clock = ManualClock()
        let refreshes = Atomic(0)
        let (entered, refreshEntered) = AsyncStream<Void>.makeStream()
        let (release, releaseRefresh) = AsyncStream<Void>.makeStream()
        let gate = try Self.gate(
            transport, clock: clock,
            requiresRefresh: { token, now in token == "t0" && now.offset >= .seconds(60) },
            refresh: { _ in
                refreshes.add(1, ordering: .relaxed)
                refreshEntered.yield()
                for await _ in release { break }
                return "t1"
            })
        _ = try await gate.send(Self.request(.get, "/fresh"))
        clock.advance(by: .seconds(60))
        let first = Task { try await gate.send(Self.request(.get, "/a")) }
        for await _ in entered { break }
        // The first request parked to refresh it; the second waits for a slot behind the
        // refresh, and is sent with the new credential.
        await gate.parkedRequests(atLeast: 1)
        let second = Task { try await gate.send(Self.request(.get, "/b")) }
        await gate.queuedAttempts(atLeast: 1)
        releaseRefresh.yield()
        _ = try await first.value
        _ = try await second.value
        #expect(refreshes.load(ordering: .relaxed) == 1)
        #expect(transport.sends.map(\.token) == ["t0", "t1", "t1"])
        let events = gate.recordedEvents
        #expect(events.contains(.refreshStarted(fromVersion: 1, request: 1)))
        #expect(events.contains(.parked(request: 1, credentialVersion: 1)))
        #expect(!events.contains { if case .redirect = $0 { true } else { false } })
    }

    /// A judge that calls every credential stale, with a window of one refresh: the first request
    /// refreshes, the rest find the window full and are sent with what is current — the server
    /// judges, and nothing fails for the judge's sake.
    @Test func aStaleJudgementTheWindowRefusesSendsWhatIsCurrent() async throws {
        let refreshes = Atomic(0)
        let transport = ScriptedSends([])
        let gate = try Self.gate(
            transport, window: .init(maxRefreshes: 1, period: .seconds(30)),
            requiresRefresh: { _, _ in true },
            refresh: { _ in "t\(refreshes.add(1, ordering: .relaxed).newValue)" })
        for index in 0..<4 {
            let response = try await gate.send(Self.request(.get, "/\(index)"))
            #expect(response.response.status == .ok)
        }
        #expect(refreshes.load(ordering: .relaxed) == 1)
        #expect(transport.sends.map(\.token) == ["t1", "t1", "t1", "t1"])
        #expect(!gate.recordedEvents.contains { if case .refreshWindowExceeded = $0 { true } else { false } })
    }

    /// `refresh()` refreshes with no request, returns the new version, and a second call while
    /// it runs joins it instead of starting another.
    @Test func refreshRunsOneRefreshForEveryoneWhoAsks() async throws {
        let refreshes = Atomic(0)
        let (entered, refreshEntered) = AsyncStream<Void>.makeStream()
        let (release, releaseRefresh) = AsyncStream<Void>.makeStream()
        let gate = try Self.gate(
            ScriptedSends([]),
            refresh: { _ in
                let count = refreshes.add(1, ordering: .relaxed).newValue
                refreshEntered.yield()
                for await _ in release { break }
                return "t\(count)"
            })
        let first = Task { try await gate.refresh() }
        for await _ in entered { break }
        let second = Task { try await gate.refresh() }
        await gate.parkedRequests(atLeast: 2)
        releaseRefresh.yield()
        #expect(try await first.value == 2)
        #expect(try await second.value == 2)
        #expect(refreshes.load(ordering: .relaxed) == 1)
        #expect(
            gate.recordedEvents.prefix(2) == [
                .refreshStarted(fromVersion: 1, request: nil), .refreshSucceeded(version: 2),
            ])
    }

    /// A failed refresh keeps what the refresh threw, for `refresh()` and for a request alike,
    /// and the request whose 401 started it keeps the status.
    @Test func aFailedRefreshKeepsItsErrorAndTheRequestKeepsItsStatus() async throws {
        struct Revoked: Error, Equatable {}
        let gate = try Self.gate(ScriptedSends([.status(.unauthorized)]), refresh: { _ in throw Revoked() })
        let error = await #expect(throws: GateError.self) { try await gate.send(Self.request(.get)) }
        #expect(error?.code == .refreshFailed)
        #expect(error?.status == 401)
        #expect(error?.underlyingError as? Revoked == Revoked())

        let manual = try Self.gate(ScriptedSends([]), refresh: { _ in throw Revoked() })
        let refreshError = await #expect(throws: GateError.self) { try await manual.refresh() }
        #expect(refreshError?.code == .refreshFailed)
        #expect(refreshError?.message == "the credential refresh failed: Revoked()")
        #expect(refreshError?.underlyingError as? Revoked == Revoked())
    }

    /// `refresh()` sends no request, so its errors name none: cancelled while it waits (the
    /// refresh goes on), after a sign-out, after a shutdown.
    @Test func refreshWithoutARequestNamesNone() async throws {
        let (entered, refreshEntered) = AsyncStream<Void>.makeStream()
        let (release, releaseRefresh) = AsyncStream<Void>.makeStream()
        let gate = try Self.gate(
            ScriptedSends([]),
            refresh: { _ in
                refreshEntered.yield()
                for await _ in release { break }
                return "t1"
            })
        let first = Task { try await gate.refresh() }
        for await _ in entered { break }
        let waiter = Task { try await gate.refresh() }
        await gate.parkedRequests(atLeast: 2)
        waiter.cancel()
        let cancelled = await #expect(throws: GateError.self) { try await waiter.value }
        #expect(cancelled?.code == .cancelled)
        #expect(cancelled?.message == "waiting for the credential refresh was cancelled; the refresh goes on")
        #expect(cancelled?.request == nil)
        releaseRefresh.yield()
        #expect(try await first.value == 2)

        gate.signOut()
        let signedOut = await #expect(throws: GateError.self) { try await gate.refresh() }
        #expect(signedOut?.code == .signedOut)
        #expect(signedOut?.message == "signed out")
        gate.shutdown()
        let shutDown = await #expect(throws: GateError.self) { try await gate.refresh() }
        #expect(shutDown?.code == .shutDown)
        #expect(shutDown?.message == "the gate was shut down")
        #expect(shutDown?.request == nil)
    }

    /// A request on the wire when `signOut()` came, whose 401 then arrived, ends `signedOut`
    /// with that 401.
    @Test func aRequestRejectedAfterSignOutKeepsItsStatus() async throws {
        let (sending, sendStarted) = AsyncStream<Void>.makeStream()
        let (answer, answerSend) = AsyncStream<Void>.makeStream()
        struct Held: GateTransport {
            let started: AsyncStream<Void>.Continuation
            let answer: AsyncStream<Void>
            func send(_ request: HTTPRequest, body: GateRequestBody?) async throws -> GateTransportResponse {
                started.yield()
                for await _ in answer { break }
                return GateTransportResponse(response: HTTPResponse(status: .unauthorized), body: [])
            }
        }
        let gate = try Self.gate(Held(started: sendStarted, answer: answer))
        let request = Task { try await gate.send(Self.request(.get)) }
        for await _ in sending { break }
        gate.signOut()
        answerSend.yield()
        let error = await #expect(throws: GateError.self) { try await request.value }
        #expect(error?.code == .signedOut)
        #expect(error?.status == 401)
    }

    // MARK: - A gate that cannot storm

    /// By default a server that rejects every fresh credential gets five refreshes in 30 s.
    @Test func theDefaultRefreshWindowBoundsAStorm() async throws {
        #expect(GateConfiguration().refreshWindow == .init(maxRefreshes: 5, period: .seconds(30)))
        let refreshes = Atomic(0)
        let transport = MemoryTransport(validToken: nil)
        var configuration = GateConfiguration(
            retry: .automatic(.attempts(2, backoff: .milliseconds(200))), jitterSeed: 1)
        configuration.eventRetention = 10_000
        let gate = try RequestGate<String>(
            transport: transport, credential: "t0", configuration: configuration, clock: ManualClock(),
            authorize: { request, token in request.headerFields[.authorization] = "Bearer \(token)" },
            refresh: { _ in "t\(refreshes.add(1, ordering: .relaxed).newValue)" })
        var codes: [GateError.Code] = []
        for index in 0..<30 {
            do {
                _ = try await gate.send(Self.request(.get, "/\(index)"))
            } catch {
                codes.append(error.code)
            }
        }
        #expect(refreshes.load(ordering: .relaxed) == 5)
        #expect(codes.count == 30)
        #expect(codes.last == .refreshWindowExceeded)
    }

    /// The rejection that exceeds the window lands on the request's last attempt: the request
    /// ends with the window's error, the more specific cause, not "gave up after 3 attempts".
    @Test func theWindowsRefusalOnTheLastAttemptIsTheRequestsError() async throws {
        let gate = try Self.gate(
            MemoryTransport(validToken: nil), maxAttempts: 3, window: .init(maxRefreshes: 2, period: .seconds(30)))
        let error = await #expect(throws: GateError.self) { try await gate.send(Self.request(.get)) }
        #expect(error?.code == .refreshWindowExceeded)
        #expect(error?.status == 401)
        #expect(gate.recordedEvents.contains(.refreshWindowExceeded(refreshes: 2, period: .seconds(30))))
    }

    // MARK: - Events that say what happened

    /// A request that waited for the gate's first credential was parked, never rejected: its
    /// event says so (it said "credential v0 rejected").
    @Test func aRequestParkedWithoutBeingSentIsRecordedAsParked() async throws {
        let gate = try Self.gate(ScriptedSends([]), credential: nil)
        _ = try await gate.send(Self.request(.get, "/a"))
        let events = gate.recordedEvents
        #expect(events.contains(.refreshStarted(fromVersion: 0, request: 0)))
        #expect(events.contains(.parked(request: 0, credentialVersion: 0)))
        #expect(!events.contains { if case .redirect = $0 { true } else { false } })
        #expect(
            "\(GateEvent.parked(request: 1, credentialVersion: 1))"
                == "#1 parked (waiting for the refresh of credential v1)")
        // Its log line says so too, and names no rejection.
        let handler = CapturingLogHandler()
        GateEvent.parked(request: 1, credentialVersion: 1).log(to: Logger(label: "gate") { _ in handler })
        #expect(handler.lines.all.map(\.message) == ["request parked behind the refresh"])
    }
}
