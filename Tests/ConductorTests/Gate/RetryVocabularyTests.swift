import Conductor
import ConductorTestKit
import HTTPTypes
import Testing

/// One retry vocabulary for tasks and requests: the schedule is a ``RetryPolicy`` whose
/// multiplier is the user's, a request's own policy replaces the gate's (keeping what it leaves
/// unsaid), `Retry-After` is honoured, ignored or capped as the policy says, a request that
/// gives up says how many sends it made and what the transport last threw, and requests have a
/// priority type of their own.
@Suite(.timeLimit(.minutes(1)))
struct RetryVocabularyTests {
    typealias ScriptedSends = GateCorrectnessTests.ScriptedSends

    struct MyError: Error, Equatable {
        let code: Int
    }

    static func request(_ method: HTTPRequest.Method, _ path: String = "/orders") -> HTTPRequest {
        HTTPRequest(method: method, scheme: "https", authority: "example.test", path: path)
    }

    static let instantly = RetryPolicy.attempts(2, backoff: .zero, maxBackoff: .zero)

    static func gate(
        _ transport: some GateTransport, retry: RequestRetryPolicy = .automatic(instantly),
        clock: ManualClock = ManualClock()
    ) throws(GateError) -> RequestGate<String> {
        try RequestGate(
            transport: transport, credential: "t0",
            configuration: GateConfiguration(retry: retry, jitterSeed: 1, eventRetention: 10_000), clock: clock,
            authorize: { request, token in request.headerFields[.authorization] = "Bearer \(token)" },
            refresh: { _ in "t1" })
    }

    /// The delays of the gate's `retry` events, up to its first request's end.
    static func retryDelays(_ gate: RequestGate<String>) async -> [Duration] {
        var delays: [Duration] = []
        for await event in gate.events {
            switch event {
            case .retry(_, _, let delay): delays.append(delay)
            case .success, .failure: return delays
            default: continue
            }
        }
        return delays
    }

    // MARK: - The multiplier

    /// A multiplier of 3 waits 100, 300, 900 ms (each scaled by the gate's seeded jitter into
    /// [½, 1)); the gate's multiplier used to be fixed at 2.
    @Test func theGatesMultiplierIsTheSchedules() async throws {
        let clock = ManualClock()
        let transient = ScriptedSends.Step.fail(ScriptedSends.Transient())
        let transport = ScriptedSends([transient, transient, transient])
        let gate = try Self.gate(
            transport, retry: .automatic(.attempts(4, backoff: .milliseconds(100), multiplier: 3)), clock: clock)
        let sending = Task { try await gate.send(Self.request(.get, "/feed")) }
        for base in [100, 300, 900] {
            await clock.sleepers(atLeast: 1, for: .gateBackoff)
            clock.advance(by: .milliseconds(base))
        }
        #expect(try await sending.value.response.status == .ok)
        #expect(transport.sends.count == 4)
        let delays = await Self.retryDelays(gate)
        // The same schedule, with the same seeded jitter, outside the gate.
        var jitter = SplitMix64(seed: 1)
        let schedule = RetryPolicy.attempts(4, backoff: .milliseconds(100), multiplier: 3).retrySchedule
        #expect(delays == (1...3).map { schedule.delay(afterAttempt: $0, jitter: &jitter) })
        for (delay, base) in zip(delays, [100, 300, 900]) {
            #expect(delay >= .milliseconds(base) / 2 && delay < .milliseconds(base), "\(delay) for \(base) ms")
        }
    }

    /// One ``RetryPolicy`` value, given to a graph task and to a request: both make its three
    /// attempts, waiting 1 s, then 3 s.
    @Test func oneRetryPolicyServesAGraphTaskAndARequest() async throws {
        let policy = RetryPolicy.attempts(3, backoff: .seconds(1), multiplier: 3)

        let clock = ManualClock()
        var graph = TaskGraph()
        graph.add("config", options: TaskOptions(retry: policy)) { context in
            if context.attempt < 3 { throw MyError(code: context.attempt) }
            return "ok"
        }
        let run = try graph.start(clock: clock)
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(1))
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(3))
        let report = try await run.report()
        #expect(report["config"]?.attempts == 3)
        var taskDelays: [Duration] = []
        for await case .taskRetried(_, _, _, let delay, _) in run.events { taskDelays.append(delay) }
        #expect(taskDelays == [.seconds(1), .seconds(3)])

        let gateClock = ManualClock()
        let transient = ScriptedSends.Step.fail(ScriptedSends.Transient())
        let transport = ScriptedSends([transient, transient])
        let gate = try Self.gate(transport, clock: gateClock)
        let sending = Task { try await gate.send(Self.request(.post), retry: .always(policy)) }
        for wait in [1, 3] {
            await gateClock.sleepers(atLeast: 1, for: .gateBackoff)
            gateClock.advance(by: .seconds(wait))
        }
        #expect(try await sending.value.response.status == .ok)
        #expect(transport.sends.count == 3)
        let requestDelays = await Self.retryDelays(gate)
        #expect(requestDelays.count == 2)
        #expect(requestDelays[0] >= .milliseconds(500) && requestDelays[0] < .seconds(1))
        #expect(requestDelays[1] >= .milliseconds(1500) && requestDelays[1] < .seconds(3))
    }

    // MARK: - A request's own policy

    /// A request's schedule replaces the gate's: four sends where the gate allows two.
    @Test func aRequestsScheduleReplacesTheGates() async throws {
        let transient = ScriptedSends.Step.fail(ScriptedSends.Transient())
        let transport = ScriptedSends([transient, transient, transient])
        let gate = try Self.gate(transport)
        let policy = RequestRetryPolicy.always(.attempts(4, backoff: .zero, maxBackoff: .zero))
        #expect(try await gate.send(Self.request(.post), retry: policy).response.status == .ok)
        #expect(transport.sends.count == 4)
    }

    /// What a request's policy leaves unsaid is the gate's: `.always()` changes which failures
    /// are retried, not how many sends there are.
    @Test func aRequestsPolicyKeepsTheGatesScheduleWhenItGivesNone() async throws {
        let transient = ScriptedSends.Step.fail(ScriptedSends.Transient())
        let transport = ScriptedSends([transient, transient, transient])
        let gate = try Self.gate(transport)
        let error = await #expect(throws: GateError.self) {
            try await gate.send(Self.request(.post), retry: .always())
        }
        #expect(error?.code == .transport)
        #expect(error?.attempts == 2)
        #expect(transport.sends.count == 2)
    }

    /// The gate's own policy can retry every method; a request can still opt out.
    @Test func aGateWidePolicyIsEveryRequestsUnlessItGivesItsOwn() async throws {
        let transient = ScriptedSends.Step.fail(ScriptedSends.Transient())
        let transport = ScriptedSends([transient, transient])
        let gate = try Self.gate(transport, retry: .always(.attempts(3, backoff: .zero, maxBackoff: .zero)))
        #expect(try await gate.send(Self.request(.post)).response.status == .ok)
        #expect(transport.sends.count == 3)
        let refused = ScriptedSends([transient])
        let once = try Self.gate(refused, retry: .always(.attempts(3, backoff: .zero, maxBackoff: .zero)))
        let error = await #expect(throws: GateError.self) {
            try await once.send(Self.request(.post), retry: .never)
        }
        #expect(error?.message.contains("not retried: its retry policy is never") == true)
        #expect(refused.sends.count == 1)
    }

    // MARK: - Retry-After

    /// `Retry-After: 3` within the policy's cap: the request waits exactly 3 s.
    @Test func aRetryAfterWithinItsCapIsHonoured() async throws {
        let clock = ManualClock()
        let transport = MemoryTransport(validToken: "t0")
        transport.state.withLock { $0.script = [.tooManyRequests] }
        let gate = try Self.gate(transport, clock: clock)
        let sending = Task {
            try await gate.send(
                Self.request(.get, "/feed"), retry: .automatic(retryAfter: .honoured(upTo: .seconds(3))))
        }
        await clock.sleepers(atLeast: 1, for: .gateBackoff)
        clock.advance(by: .seconds(3))
        #expect(try await sending.value.response.status == .ok)
        #expect(await Self.retryDelays(gate) == [.seconds(3)])
    }

    /// An ignored `Retry-After` leaves the wait to the schedule: well under the server's 3 s.
    @Test func anIgnoredRetryAfterWaitsAsTheScheduleSays() async throws {
        let clock = ManualClock()
        let transport = MemoryTransport(validToken: "t0")
        transport.state.withLock { $0.script = [.tooManyRequests] }
        let gate = try Self.gate(
            transport, retry: .automatic(.attempts(2, backoff: .milliseconds(100)), retryAfter: .ignored), clock: clock)
        let sending = Task { try await gate.send(Self.request(.get, "/feed")) }
        await clock.sleepers(atLeast: 1, for: .gateBackoff)
        clock.advance(by: .milliseconds(100))
        #expect(try await sending.value.response.status == .ok)
        let delays = await Self.retryDelays(gate)
        #expect(delays.count == 1)
        #expect(delays.allSatisfy { $0 >= .milliseconds(50) && $0 < .milliseconds(100) })
    }

    /// A `Retry-After` beyond the cap ends the request, with one send made.
    @Test func aRetryAfterBeyondItsCapEndsTheRequest() async throws {
        let transport = MemoryTransport(validToken: "t0")
        transport.state.withLock { $0.script = [.tooManyRequests] }
        let gate = try Self.gate(transport, retry: .automatic(retryAfter: .honoured(upTo: .seconds(2))))
        let error = await #expect(throws: GateError.self) { try await gate.send(Self.request(.get, "/feed")) }
        #expect(error?.code == .retriesExhausted)
        #expect(error?.attempts == 1)
        #expect(error?.status == 429)
        #expect(
            error?.message
                == "GET /feed: gave up after 1 attempt(s); last: Retry-After 3.00 s exceeds the cap of 2.00 s"
        )
        #expect(transport.sends.count == 1)
    }

    // MARK: - retriesExhausted's fields

    /// The attempt count is a field, and what the transport threw on an earlier attempt is the
    /// error's cause as a value, not only text.
    @Test func retriesExhaustedKeepsItsAttemptsAndTheLastTransportError() async throws {
        let transport = ScriptedSends([.fail(MyError(code: 7)), .status(.serviceUnavailable)])
        let gate = try Self.gate(transport)
        let error = await #expect(throws: GateError.self) { try await gate.send(Self.request(.get)) }
        #expect(error?.code == .retriesExhausted)
        #expect(error?.attempts == 2)
        #expect(error?.status == 503)
        #expect(error?.underlyingError as? MyError == MyError(code: 7))
        #expect(error?.message == "GET /orders: gave up after 2 attempt(s); last: status 503")
    }

    /// Attempts that all got responses leave no transport error behind.
    @Test func retriesExhaustedOnResponsesAloneHasNoUnderlyingError() async throws {
        let transport = ScriptedSends([.status(.serviceUnavailable), .status(.serviceUnavailable)])
        let gate = try Self.gate(transport)
        let error = await #expect(throws: GateError.self) { try await gate.send(Self.request(.get)) }
        #expect(error?.code == .retriesExhausted)
        #expect(error?.attempts == 2)
        #expect(error?.underlyingError == nil)
    }

    /// A transport error that ends the request counts its sends too; other codes have none.
    @Test func aTransportErrorCountsItsAttempts() async throws {
        let transport = ScriptedSends([.fail(MyError(code: 1)), .fail(MyError(code: 2))])
        let gate = try Self.gate(transport)
        let error = await #expect(throws: GateError.self) { try await gate.send(Self.request(.get)) }
        #expect(error?.code == .transport)
        #expect(error?.attempts == 2)
        #expect(error?.underlyingError as? MyError == MyError(code: 2))
        let timeout = await #expect(throws: GateError.self) {
            try await gate.send(Self.request(.get), timeout: .seconds(-1))
        }
        #expect(timeout?.attempts == nil)
    }

    // MARK: - RequestPriority

    /// One priority type for a request and for a scheduler's work: the gate journals the value
    /// it was given, and a ``PriorityScheduler`` takes the same value.
    @Test func requestPriorityServesTheGateAndTheScheduler() async throws {
        let priority: RequestPriority = .high
        let gate = try Self.gate(ScriptedSends([]))
        #expect(try await gate.send(Self.request(.get), priority: priority).response.status == .ok)
        var journaled: RequestPriority?
        for await event in gate.events {
            if case .initial(_, _, let given) = event {
                journaled = given
                break
            }
        }
        #expect(journaled == .high)

        let scheduler = try PriorityScheduler(maxConcurrent: 1)
        #expect(try await scheduler.run(priority: priority) { "ran" } == "ran")
        #expect(RequestPriority.allCases.sorted() == [.low, .default, .high, .unique])
        #expect("\(RequestPriority.default)" == "default")
    }
}
