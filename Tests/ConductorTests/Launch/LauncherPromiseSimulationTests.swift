import Conductor
import ConductorTestKit
import Testing

/// A launcher's promises over random launches and random requests (removals, additions during
/// the launch, a cancel before or during it), each seed run on ConductorTestKit's
/// `Simulation`, so every interleaving replays exactly. A launcher's tasks run in tasks of
/// their own, which ask whether their attempt is still open before the body begins, so here
/// the strict promise holds: no body begins after `cancel()` returned.
///
/// Checked for every seed: the launch finishes (no stall) and reports every task it had once;
/// no body begins after `cancel()` returned or after `remove` answered `prevented` or
/// `abandoned` (and the task is then cancelled); a task's bodies began at most as many times
/// as it is reported to have attempted; succeeded means the last attempt's body returned,
/// failed that it threw; the events agree with the report.
///
/// `CONDUCTOR_REPLAY=<seed> swift test --filter LauncherPromiseSimulationTests` replays a seed.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct LauncherPromiseSimulationTests {
    private struct Removal: Sendable {
        let name: String
        let answer: TaskRemoval?
        let position: Int
    }

    private struct Ending: Sendable {
        let report: RunReport
        let events: [GraphEvent]
        let removals: [Removal]
        let names: [String]
        let cancelledBeforeStart: Bool
    }

    @Test(arguments: StressConfiguration.seeds(default: 200, base: 0xAD7E_1A47))
    func simulatedLaunchesKeepTheirPromises(seed: UInt64) async throws {
        let log = BodyLog()
        let simulated = try await Simulation.run(seed: seed) { simulation in
            try await Self.scenario(seed: seed, simulation: simulation, log: log)
        }
        #expect(simulated.escapes == 0, "seed \(seed): work left the simulation; the seed does not replay")
        check(simulated.value, log: log, seed: seed)
    }

    private static func task(
        _ name: String, dependsOn dependencies: TaskDependencies, required: Bool, retry: RetryPolicy,
        _ behaviour: SimulatedBody, log: BodyLog, simulation: Simulation
    ) -> ClosureStartupTask {
        let attempts = Attempts()
        return ClosureStartupTask(
            name, dependsOn: dependencies, options: TaskOptions(retry: retry, failure: required ? .required : .optional)
        ) {
            try await behaviour.run(name, attempt: attempts.next(), log: log, simulation: simulation)
        }
    }

    private static func scenario(seed: UInt64, simulation: Simulation, log: BodyLog) async throws -> Ending {
        var generator = SeededGenerator(seed: seed)
        let launcher = Launcher(clock: simulation.clock)
        var names: [String] = []
        func randomTask(_ name: String, generator: inout SeededGenerator) -> ClosureStartupTask {
            var dependencies = TaskDependencies.inOrderOfAddition
            if !names.isEmpty, Bool.random(using: &generator) {
                dependencies = .on(
                    Array(
                        Set(
                            (0..<Int.random(in: 0...2, using: &generator)).map { _ in
                                names.randomElement(using: &generator)!
                            })
                    ).sorted())
            }
            let retry: RetryPolicy =
                Bool.random(using: &generator)
                ? .attempts(Int.random(in: 2...3, using: &generator), backoff: .milliseconds(1)) : .never
            return task(
                name, dependsOn: dependencies, required: Int.random(in: 0..<5, using: &generator) == 0, retry: retry,
                SimulatedBody.allCases.randomElement(using: &generator)!, log: log, simulation: simulation)
        }
        for index in 0..<Int.random(in: 2...7, using: &generator) {
            try launcher.add(randomTask("t\(index)", generator: &generator))
            names.append("t\(index)")
        }
        let cancelledBeforeStart = Int.random(in: 0..<8, using: &generator) == 0
        if cancelledBeforeStart {
            launcher.cancel()
            log.markStopped()
        }
        try launcher.start()
        var removals: [Removal] = []
        for number in 0..<Int.random(in: 0...4, using: &generator) {
            for _ in 0..<Int.random(in: 0...6, using: &generator) { await Task.yield() }
            switch Int.random(in: 0..<5, using: &generator) {
            case 0, 1:
                let name = names.randomElement(using: &generator)!
                let answer = launcher.remove(name)
                removals.append(Removal(name: name, answer: answer, position: log.count))
            case 2, 3:
                let added = randomTask("x\(number)", generator: &generator)
                do throws(LaunchError) {
                    try launcher.add(added)
                    names.append(added.name)
                } catch {
                    #expect(error.code == .launchFinished, "seed \(seed): adding \(added.name) threw \(error)")
                }
            default:
                launcher.cancel()
                log.markStopped()
            }
        }
        let report = try await launcher.report()
        return Ending(
            report: report.run, events: await launcher.events.collected(), removals: removals, names: names,
            cancelledBeforeStart: cancelledBeforeStart)
    }

    private func check(_ ending: Ending, log: BodyLog, seed: UInt64) {
        let report = ending.report
        let context = "seed \(seed)"
        #expect(
            report.tasks.map(\.id).sorted() == ending.names.sorted(),
            "\(context): the report's tasks \(report.tasks.map(\.id)) are not the launch's \(ending.names)")
        #expect(log.beginsAfterStop.isEmpty, "\(context): bodies began after cancel() returned: \(log.beginsAfterStop)")
        if ending.cancelledBeforeStart {
            #expect(log.entries.isEmpty, "\(context): cancelled before start, yet bodies ran")
            #expect(report.outcome == .cancelled, "\(context)")
        }
        for record in report.tasks {
            let attempts = log.attempts(of: record.id)
            #expect(
                attempts == attempts.sorted() && attempts.allSatisfy { $0 <= record.attempts },
                "\(context): \(record.id) reported \(record.attempts) attempts, its bodies began \(attempts)")
            let last = log.end(of: record.id, attempt: record.attempts)
            switch record.outcome.kind {
            case .succeeded:
                #expect(
                    last == .returned, "\(context): \(record.id) succeeded; its last body: \(String(describing: last))")
            case .failed:
                #expect(last == .threw, "\(context): \(record.id) failed; its last body: \(String(describing: last))")
            case .skipped:
                #expect(attempts.isEmpty, "\(context): \(record.id) was skipped, yet its body began")
            case .timedOut:
                Issue.record("\(context): \(record.id) timed out without a timeout")
            case .cancelled:
                break
            }
        }
        for removal in ending.removals {
            guard let answer = removal.answer else {
                Issue.record("\(context): remove(\(removal.name)) did not know the task")
                continue
            }
            #expect(answer != .stillRunning, "\(context): a launcher task's body never runs on a worker")
            guard answer.removed else { continue }
            let late = log.begins(of: removal.name, from: removal.position)
            #expect(late == 0, "\(context): remove(\(removal.name)) answered \(answer), then \(late) bodies began")
            #expect(report[removal.name]?.outcome.kind == .cancelled, "\(context): \(removal.name) after \(answer)")
        }
        checkEvents(ending.events, against: report, context: context)
    }
}

/// Counts a closure task's attempts (a launcher task's body is not told its attempt number).
private final class Attempts: Sendable {
    private let count = Lock(0)

    func next() -> Int {
        count.withLock {
            $0 += 1
            return $0
        }
    }
}
