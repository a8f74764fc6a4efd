import ConductorTestKit
import Testing

@testable import ConductorAssembly
@testable import ConductorCore
@testable import ConductorGate
@testable import ConductorGraph
@testable import ConductorHarmonizer
@testable import ConductorLaunch
@testable import ConductorReports

@Suite struct TimeoutRetryTests {
    private struct Flaky: Error {}

    /// A task that ignores cancellation still times out on time: the run does not wait for it.
    @Test func timeoutIsPromptEvenWhenTheWorkIgnoresCancellation() async throws {
        let clock = ManualClock()
        let never = Latch()
        var graph = TaskGraph()
        graph.add("stuck", options: TaskOptions(timeout: .seconds(2), failure: .optional)) { _ in await never.wait() }
        graph.add("next", dependsOn: ["stuck"], options: TaskOptions(whenDependencyFails: .runAnyway)) { _ in }
        let run = try graph.start(clock: clock)
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(2))
        let report = try await run.report()
        #expect("\(report["stuck"]!.outcome)" == "timed out after 2.00 s")
        #expect(report["stuck"]?.endedAt == .seconds(2))
        #expect(report["next"]?.outcome.isSuccess == true)
        never.open()
    }

    /// The run's timed attempts share its one timer: ten stuck tasks, one sleeper, each
    /// timed out with its own timeout.
    @Test func timedAttemptsShareTheRunsTimer() async throws {
        let clock = ManualClock()
        let never = Latch()
        var graph = TaskGraph()
        for index in 0..<10 {
            graph.add("t\(index)", options: TaskOptions(timeout: .seconds(10 - index), failure: .optional)) { _ in
                await never.wait()
            }
        }
        let run = try graph.start(clock: clock)
        let reports = Recorder<RunReport>()
        Task {
            reports.append(try await run.report())
            clock.stateChanged()
        }
        var mostSleepers = 0
        let done = try await clock.advance(by: .seconds(1)) {
            mostSleepers = max(mostSleepers, clock.sleeperCount)
            return !reports.all.isEmpty
        }
        #expect(done)
        #expect(mostSleepers == 1, "one timer task for the run, not one per attempt")
        let report = try #require(reports.all.first)
        for index in 0..<10 {
            #expect(
                "\(report["t\(index)"]!.outcome)" == "timed out after \(Duration.seconds(10 - index).shortDescription)")
            // Not exactly: the driver may move time on before the worker the timeout woke
            // records its end (the hand-over is a cell, not a sleep on the clock).
            #expect(try #require(report["t\(index)"]?.endedAt) >= .seconds(10 - index))
        }
        #expect(clock.sleeperCount == 0)
        never.open()
    }

    @Test func requiredTimeoutFailsTheRunNamingTheTask() async throws {
        let clock = ManualClock()
        var graph = TaskGraph()
        graph.add("config", options: TaskOptions(timeout: .milliseconds(500))) { _ in
            try await clock.sleep(for: .seconds(10))
        }
        let run = try graph.start(clock: clock)
        await clock.sleepers(atLeast: 2)
        clock.advance(by: .milliseconds(500))
        let report = try await run.report()
        guard case .failed(let error) = report.outcome else {
            Issue.record("expected failure, got \(report.outcome)")
            return
        }
        #expect(error.code == .timedOut)
        #expect(error.message == "task 'config' timed out after 500 ms")
    }

    @Test func retriesWithExponentialBackoffOnTheClock() async throws {
        let clock = ManualClock()
        let attempts = Recorder<Int>()
        var graph = TaskGraph()
        graph.add("config", options: TaskOptions(retry: .attempts(3, backoff: .milliseconds(100)))) { context in
            attempts.append(context.attempt)
            if context.attempt < 3 { throw Flaky() }
            return "ok"
        }
        let run = try graph.start(clock: clock)
        await clock.sleepers(atLeast: 1)
        #expect(attempts.all == [1])
        clock.advance(by: .milliseconds(100))
        await clock.sleepers(atLeast: 1)
        #expect(attempts.all == [1, 2])
        clock.advance(by: .milliseconds(200))
        let report = try await run.report()
        #expect(attempts.all == [1, 2, 3])
        #expect(report["config"]?.attempts == 3)
        #expect(report["config"]?.outcome.isSuccess == true)
        #expect(report["config"]?.endedAt == .milliseconds(300))
        var delays: [Duration] = []
        for await case .taskRetried(_, _, _, let delay, _) in run.events { delays.append(delay) }
        #expect(delays == [.milliseconds(100), .milliseconds(200)])
    }

    @Test func retryIsBounded() async throws {
        let clock = ManualClock()
        let attempts = Recorder<Int>()
        var graph = TaskGraph()
        graph.add("down", options: TaskOptions(retry: .attempts(2, backoff: .seconds(1)), failure: .optional)) {
            context in
            attempts.append(context.attempt)
            throw Flaky()
        }
        let run = try graph.start(clock: clock)
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(1))
        let report = try await run.report()
        #expect(attempts.all == [1, 2])
        #expect("\(report["down"]!.outcome)".hasPrefix("failed"))
    }

    @Test func timedOutAttemptsAreRetried() async throws {
        let clock = ManualClock()
        var graph = TaskGraph()
        graph.add("ping", options: TaskOptions(timeout: .seconds(1), retry: .attempts(2, backoff: .seconds(1)))) {
            context in
            if context.attempt == 1 { try await clock.sleep(for: .seconds(60)) }
            return context.attempt
        }
        let run = try graph.start(clock: clock)
        await clock.sleepers(atLeast: 2)
        clock.advance(by: .seconds(1))  // attempt 1 times out
        // Once the retry is announced, the abandoned attempt's sleep is gone; only the backoff remains.
        await run.event { if case .taskRetried = $0 { true } else { false } }
        // The backoff's own sleep: the abandoned attempt's may not be gone yet.
        await clock.sleepers(atLeast: 1, for: .retryBackoff)
        clock.advance(by: .seconds(1))  // backoff over: attempt 2 succeeds at once
        let report = try await run.report()
        #expect(report["ping"]?.attempts == 2)
        #expect(report["ping"]?.outcome.isSuccess == true)
    }

    @Test func backoffIsCapped() {
        let policy = RetryPolicy.attempts(10, backoff: .seconds(1), multiplier: 3, maxBackoff: .seconds(5))
        #expect((1...4).map { policy.backoff(after: $0) } == [.seconds(1), .seconds(3), .seconds(5), .seconds(5)])
    }
}
