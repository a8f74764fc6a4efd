import ConductorTestKit
import Testing

@testable import ConductorAssembly
@testable import ConductorCore
@testable import ConductorGate
@testable import ConductorGraph
@testable import ConductorHarmonizer
@testable import ConductorLaunch
@testable import ConductorReports

/// Three promises the run once broke, found by `GraphPromiseProbeTests` and
/// `GraphPromiseSimulationTests` (the first two) and by reading the hop the third makes; each
/// test is deterministic and failed on the engine before its fix.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct GraphRunRegressionTests {
    private struct Fault: Error {}

    /// A task removed while it sleeps out its retry's backoff has ended (`prevented`), yet it
    /// keeps its concurrency slot until the backoff is over: under a limit of 1, the next ready
    /// task waits out the removed task's hour-long backoff. The simulation moves the clock only
    /// when nothing can run, so "next" starting at 3600 s, not at 0, is that wait.
    @Test(arguments: [nil, Duration.seconds(10)])
    func aTaskRemovedInItsBackoffGivesUpItsSlotAtOnce(timeout: Duration?) async throws {
        let simulated = try await Simulation.run(seed: 1) { simulation in
            let clock = simulation.clock
            var graph = TaskGraph()
            graph.add(
                "flaky",
                options: TaskOptions(
                    priority: .high, timeout: timeout,
                    retry: .attempts(2, backoff: .seconds(3600), maxBackoff: .seconds(3600)), failure: .optional)
            ) { _ in throw Fault() }
            graph.add("next", options: TaskOptions(priority: .low)) { _ in }
            let run = try graph.start(concurrencyLimit: 1, clock: clock)
            await clock.sleepers(atLeast: 1, for: .retryBackoff)
            let answer = try run.remove("flaky")
            return (answer, try await run.report())
        }
        let (answer, report) = simulated.value
        #expect(answer == .prevented)
        #expect(report["flaky"]?.outcome.kind == .cancelled)
        #expect(report["next"]?.outcome.kind == .succeeded)
        #expect(
            report["next"]?.startedAt == .zero,
            "'next' waited for the removed task's backoff: started at \(String(describing: report["next"]?.startedAt))")
        #expect(report.duration < .seconds(3600))
    }

    /// A task handed to a worker just before `cancel()` must not begin its body after
    /// `cancel()` returned: the worker goes on with a task of another priority in a child task,
    /// and the hop to it is a suspension point, after which the child asks whether the run
    /// still goes on. (Before, the body began, cancelled, on ~60 of these seeds.) Explores seeds 1...300: the scenario cancels after a seeded number of
    /// yields; "b" (high priority, after "a") is the task handed over across the hop.
    @Test func noBodyBeginsAfterCancelReturned() async throws {
        var late: [UInt64: [String]] = [:]
        for seed in UInt64(1)...300 {
            let log = BodyLog()
            _ = try await Simulation.run(seed: seed) { simulation in
                var generator = SeededGenerator(seed: seed)
                var graph = TaskGraph()
                graph.add("a") { context in
                    log.begin("a", context.attempt)
                    await Task.yield()
                }
                graph.add("b", dependsOn: ["a"], options: TaskOptions(priority: .high)) { context in
                    log.begin("b", context.attempt)
                }
                graph.add("c", dependsOn: ["b"], options: TaskOptions(priority: .low)) { context in
                    log.begin("c", context.attempt)
                }
                let run = try graph.start(clock: simulation.clock)
                for _ in 0..<Int.random(in: 0...6, using: &generator) { await Task.yield() }
                run.cancel()
                log.markStopped()
                return try await run.report().outcome
            }
            if !log.beginsAfterStop.isEmpty { late[seed] = log.beginsAfterStop }
        }
        #expect(late.isEmpty, "bodies began after cancel() returned (seed: bodies): \(late.sorted { $0.key < $1.key })")
    }

    /// A main-actor task handed to a worker before `cancel()` is called on the main actor: the
    /// worker's hop to the main actor cannot complete until the test suspends, after the stop,
    /// and the body must not begin then. The test holds the main actor (it does not suspend)
    /// until the run's journal shows the task handed out.
    @MainActor @Test func aMainActorBodyDoesNotBeginAfterACancelOnTheMainActor() async throws {
        let log = BodyLog()
        var graph = TaskGraph()
        graph.addOnMainActor("ui") { context in log.begin("ui", context.attempt) }
        let run = try graph.start()
        // `queued` and `started`: handed out, its worker now waits for the main actor.
        while run.storage.recordedEventCount < 2 {}
        run.cancel()
        log.markStopped()
        let report = try await run.report()
        #expect(log.beginsAfterStop.isEmpty, "began after cancel(): \(log.beginsAfterStop)")
        #expect(report["ui"]?.outcome.kind == .cancelled)
    }
}
