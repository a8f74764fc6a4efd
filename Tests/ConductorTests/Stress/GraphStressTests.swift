import Conductor
import ConductorTestKit
import Testing

/// Random graphs racing completion, failure, timeout, cancellation, additions and removals
/// on real threads. Each iteration prints nothing unless it fails, and then names its seed:
/// replay it with `CONDUCTOR_REPLAY=<seed> swift test --filter GraphStressTests`.
@Suite struct GraphStressTests {
    private struct Fault: Error {}

    private enum Behaviour: CaseIterable { case instant, yields, fails, waitsForClock }

    @Test func everyTaskEndsExactlyOnceUnderRacingFaults() async throws {
        for seed in StressConfiguration.seeds(default: 60, base: 0x62A9_0001) {
            try await runOnce(seed: seed)
        }
    }

    private func runOnce(seed: UInt64) async throws {
        var generator = SeededGenerator(seed: seed)
        let clock = ManualClock()
        let count = Int.random(in: 5...50, using: &generator)
        let started = Recorder<String>()
        var graph = TaskGraph()
        var ids: [String] = []
        for index in 0..<count {
            let id = "t\(index)"
            let dependencies = (0..<min(index, 2)).map { _ in "t\(Int.random(in: 0..<index, using: &generator))" }
            let behaviour = Behaviour.allCases.randomElement(using: &generator)!
            let optional = Int.random(in: 0..<4, using: &generator) > 0
            let timeout: Duration? =
                Bool.random(using: &generator) ? .milliseconds(Int.random(in: 1...5, using: &generator)) : nil
            graph.add(
                id, dependsOn: .on(Array(Set(dependencies))),
                options: TaskOptions(timeout: timeout, failure: optional ? .optional : .required)
            ) { _ in
                started.append(id)
                switch behaviour {
                case .instant: break
                case .yields: await Task.yield()
                case .fails: throw Fault()
                case .waitsForClock: try await clock.sleep(for: .milliseconds(3))
                }
            }
            ids.append(id)
        }
        let run = try graph.start(concurrencyLimit: Bool.random(using: &generator) ? 3 : nil, clock: clock)
        // Time moves on its own task, racing the workers: whenever something sleeps on the
        // clock, a millisecond passes.
        let ticker = Task { try await clock.advance(by: .milliseconds(1), until: { false }, maxSteps: .max) }
        let action = Int.random(in: 0..<4, using: &generator)
        let target = ids.randomElement(using: &generator)!
        var removed: String?
        switch action {
        case 0: run.cancel()
        case 1: if (try? run.remove(target))?.removed == true { removed = target }
        case 2:
            _ = try? run.add("late\(seed)", dependsOn: [target], options: TaskOptions(failure: .optional)) { _ in
                started.append("late\(seed)")
            }
        default: break
        }
        let report = try await run.report()
        ticker.cancel()
        _ = try? await ticker.value
        var ends: [String: Int] = [:]
        var finished = 0
        for await event in run.events {
            switch event {
            case .taskSucceeded(let id, _), .taskFailed(let id, _, _), .taskTimedOut(let id, _),
                .taskSkipped(let id, _, _), .taskCancelled(let id, _):
                ends[id, default: 0] += 1
            case .runFinished: finished += 1
            default: break
            }
        }
        #expect(finished == 1, "seed \(seed)")
        #expect(ends.values.allSatisfy { $0 == 1 }, "seed \(seed): a task ended twice \(ends.filter { $0.value > 1 })")
        #expect(Set(ends.keys) == Set(report.tasks.map(\.id)), "seed \(seed): a task never ended")
        let starts = started.all
        #expect(
            Set(starts).count == starts.count || report.tasks.contains { $0.attempts > 1 }, "seed \(seed): ran twice")
        if let removed {
            #expect("\(report[removed]!.outcome)" == "cancelled" || report[removed]!.startedAt != nil, "seed \(seed)")
        }
    }
}
