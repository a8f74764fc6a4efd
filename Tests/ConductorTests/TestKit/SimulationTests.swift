import Conductor
import ConductorTestKit
import Testing

/// A simulation runs a scenario's every job on one thread in an order its seed picks, with
/// time that moves only when nothing can run: the same seed gives the same interleaving.
@Suite(.timeLimit(.minutes(1))) struct SimulationTests {
    private struct Flaky: Error {}

    /// A small page load whose bodies interleave: three calls after a config, each yielding
    /// between its steps, one with a timeout it meets, one failing once and retried after a
    /// backoff. Returns the bodies' own log and the run's events, as one log.
    private static func pageLoad(_ simulation: Simulation) async throws -> [String] {
        let log = Recorder<String>()
        let failures = Recorder<Int>()
        var graph = TaskGraph()
        graph.add("config") { _ in log.append("config") }
        for call in ["profile", "feed", "ads"] {
            graph.add(
                call, dependsOn: ["config"],
                options: TaskOptions(
                    timeout: call == "feed" ? .seconds(2) : nil, retry: .attempts(2, backoff: .milliseconds(100)))
            ) { _ in
                for step in 1...3 {
                    log.append("\(call) \(step)")
                    await Task.yield()
                }
                if call == "ads", failures.all.isEmpty {
                    failures.append(1)
                    throw Flaky()
                }
            }
        }
        graph.add("render", dependsOn: ["profile", "feed", "ads"]) { _ in log.append("render") }
        let run = try graph.start(clock: simulation.clock)
        let report = try await run.report()
        #expect(report.outcome == .completed)
        var events: [String] = []
        for await event in run.events { events.append("\(event)") }
        return log.all + events
    }

    @Test func aSeedReplaysTheSameInterleavingAHundredTimes() async throws {
        let first = try await Simulation.run(seed: 7, Self.pageLoad)
        #expect(first.escapes == 0)
        #expect(first.value.contains("render"))
        for _ in 1..<100 {
            let again = try await Simulation.run(seed: 7, Self.pageLoad)
            #expect(again.value == first.value)
            #expect(again.jobsRun == first.jobsRun)
        }
    }

    /// The seed is what picks the order: other seeds interleave the calls differently.
    @Test func otherSeedsInterleaveDifferently() async throws {
        var logs: Set<[String]> = []
        for seed in UInt64(1)...20 {
            logs.insert(try await Simulation.run(seed: seed, Self.pageLoad).value)
        }
        #expect(logs.count > 1)
    }

    /// The retry's backoff and the timeout's timer sleep on the simulation's clock, which
    /// moves only when nothing else can run: the run takes simulated time, not real time.
    @Test func timeMovesOnlyWhenNothingCanRun() async throws {
        let run = try await Simulation.run(seed: 3) { simulation in
            var graph = TaskGraph()
            let attempts = Recorder<Int>()
            graph.add("slow", options: TaskOptions(retry: .attempts(3, backoff: .seconds(30), multiplier: 1))) { _ in
                attempts.append(1)
                if attempts.all.count < 3 { throw Flaky() }
            }
            let report = try await graph.run(clock: simulation.clock)
            return (report.outcome, simulation.clock.now.offset)
        }
        #expect(run.value.0 == .completed)
        #expect(run.value.1 == .seconds(60), "two backoffs of 30 s, in simulated time")
    }

    /// A scenario that waits for something that never happens ends with a typed error
    /// naming its seed, instead of hanging the test.
    @Test func aScenarioThatCanNeverFinishIsReportedAsStalled() async throws {
        let never = Latch()
        let error = await #expect(throws: SimulationError.self) {
            try await Simulation.run(seed: 11, idleLimit: .milliseconds(200)) { _ in await never.wait() }
        }
        #expect(error?.code == .stalled)
        #expect(error?.seed == 11)
        never.open()
    }
}
