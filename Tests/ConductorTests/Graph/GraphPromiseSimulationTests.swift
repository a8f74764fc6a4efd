import Conductor
import ConductorTestKit
import Testing

/// The run's promises over random graphs and random outside requests (removals, additions,
/// a cancel, a milestone awaited after the end), each seed run on ConductorTestKit's
/// `Simulation`: one thread, jobs in an order drawn from the seed, time that moves only when
/// nothing can run. So every interleaving is replayable exactly — including the hops between
/// a task winning its start and its body beginning, which a real scheduler makes too short to
/// hit — and the bodies' own log is a total order to compare the report and the events with.
///
/// Checked for every seed: every task ends once and the run finishes (no stall); no body
/// begins after `cancel()` returned; the attempts a task's body made are the attempts it is
/// reported with (at most those, for a timed task, whose attempt may time out before its body
/// begins); succeeded means the last attempt's body returned, failed that it threw; no body of
/// a task begins after `remove` answered anything but `alreadyEnded`, and each such task ends
/// cancelled and removed (`stillRunning` too: its body is cancelled); a task added after
/// `cancel()` is refused; the events agree with the report (``checkEvents(_:against:context:)``).
///
/// `CONDUCTOR_REPLAY=<seed> swift test --filter GraphPromiseSimulationTests` replays a seed.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct GraphPromiseSimulationTests {
    private struct Fault: Error {}

    private enum Request: Sendable {
        case remove(String)
        case add(String, dependsOn: String, timeout: Duration?)
        case cancel
    }

    private struct Removal: Sendable {
        let id: String
        let answer: TaskRemoval
        /// The log's length when `remove` returned.
        let position: Int
    }

    private struct Addition: Sendable {
        let id: String
        let error: GraphError.Code?
        let afterCancel: Bool
    }

    private struct Ending: Sendable {
        let report: RunReport
        let events: [GraphEvent]
        let removals: [Removal]
        let additions: [Addition]
        let timed: Set<String>
        let ids: [String]
        let milestone: Result<Duration, GraphError>
        /// Each task's settings, for a failure's message.
        let settings: [String]
    }

    @Test(arguments: StressConfiguration.seeds(default: 200, base: 0xAD7E_0001))
    func simulatedRunsKeepTheirPromises(seed: UInt64) async throws {
        let log = BodyLog()
        let simulated = try await Simulation.run(seed: seed) { simulation in
            try await Self.scenario(seed: seed, simulation: simulation, log: log)
        }
        #expect(simulated.escapes == 0, "seed \(seed): work left the simulation; the seed does not replay")
        check(simulated.value, log: log, seed: seed)
    }

    /// `remove` of a timed task with attempts left, at every point of its first attempt: before
    /// it is handed out, before its body's task runs, while the body runs, after the attempt
    /// settled but before its worker recorded it, during the backoff, after it ended. Seeds
    /// 1...400 (fixed, so the coverage is too); each must keep the removal's promise: after
    /// `prevented` or `abandoned`, no body begins and the task is cancelled; `alreadyEnded`
    /// comes only after a body that returned, and the task succeeded.
    @Test(arguments: [true, false])
    func removalAtEveryPointOfATimedAttempt(bodyFails: Bool) async throws {
        var answers: [TaskRemoval: Int] = [:]
        for seed in UInt64(1)...400 {
            let log = BodyLog()
            let simulated = try await Simulation.run(seed: seed) { simulation in
                var generator = SeededGenerator(seed: seed)
                var graph = TaskGraph()
                graph.add(
                    "fetch",
                    options: TaskOptions(
                        timeout: .seconds(30), retry: .attempts(3, backoff: .seconds(1), maxBackoff: .seconds(1)))
                ) { context in
                    log.begin("fetch", context.attempt)
                    await Task.yield()
                    log.end("fetch", context.attempt, bodyFails ? .threw : .returned)
                    if bodyFails { throw Fault() }
                }
                // Keeps the run going past the backoff (a finished run cancels a worker still
                // sleeping out one), so a retry that should not start has the chance to.
                graph.add("other") { _ in try await simulation.clock.sleep(for: .seconds(5)) }
                let run = try graph.start(clock: simulation.clock)
                for _ in 0..<Int.random(in: 0...10, using: &generator) { await Task.yield() }
                let answer = try run.remove("fetch")
                let position = log.count
                let report = try await run.report()
                return (answer, position, report, await run.events.collected())
            }
            let (answer, position, report, events) = simulated.value
            let context = "seed \(seed), body \(bodyFails ? "fails" : "returns")"
            answers[answer, default: 0] += 1
            let record = try #require(report["fetch"])
            #expect(log.begins(of: "fetch", from: position) == 0, "\(context): a body began after \(answer)")
            #expect(log.attempts(of: "fetch").count <= record.attempts, "\(context)")
            switch answer {
            case .prevented, .abandoned:
                #expect(record.outcome.kind == .cancelled, "\(context): \(answer), reported \(record.outcome)")
            case .alreadyEnded:
                #expect(!bodyFails, "\(context): ended after one failed attempt of three")
                #expect(record.outcome.kind == .succeeded, "\(context)")
                #expect(log.ends(of: "fetch") == [.returned], "\(context)")
            case .stillRunning:
                Issue.record("\(context): a timed task's body runs in a task of its own, never on a worker")
            }
            #expect(record.attempts <= 1, "\(context): \(record.attempts) attempts")
            checkEvents(events, against: report, context: context)
        }
        // The seeds reach every answer the removal can give here (fixed seeds: deterministic).
        let expected: Set<TaskRemoval> =
            bodyFails ? [.prevented, .abandoned] : [.prevented, .abandoned, .alreadyEnded]
        #expect(Set(answers.keys) == expected, "answers over the seeds: \(answers)")
        print("removalAtEveryPointOfATimedAttempt(bodyFails: \(bodyFails)):", answers)
    }

    // MARK: - The scenario

    private static func body(
        _ id: String, _ behaviour: SimulatedBody, log: BodyLog, simulation: Simulation
    ) -> @Sendable (TaskContext) async throws -> Void {
        { context in try await behaviour.run(id, attempt: context.attempt, log: log, simulation: simulation) }
    }

    private static func scenario(seed: UInt64, simulation: Simulation, log: BodyLog) async throws -> Ending {
        var generator = SeededGenerator(seed: seed)
        var graph = TaskGraph()
        var ids: [String] = []
        var timed: Set<String> = []
        var settings: [String] = []
        let priorities: [TaskPriority] = [.low, .medium, .high]
        for index in 0..<Int.random(in: 2...9, using: &generator) {
            let id = "t\(index)"
            var dependencies: [String] = []
            for _ in 0..<Int.random(in: 0...2, using: &generator) where !ids.isEmpty {
                let dependency = ids.randomElement(using: &generator)!
                if !dependencies.contains(dependency) { dependencies.append(dependency) }
            }
            let timeout: Duration? =
                Int.random(in: 0..<3, using: &generator) == 0
                ? .milliseconds(Int.random(in: 0...4, using: &generator)) : nil
            if timeout != nil { timed.insert(id) }
            let retry: RetryPolicy =
                Bool.random(using: &generator)
                ? .attempts(Int.random(in: 2...3, using: &generator), backoff: .milliseconds(1)) : .never
            let priority = priorities.randomElement(using: &generator)!
            let failure: FailurePolicy = Int.random(in: 0..<5, using: &generator) == 0 ? .required : .optional
            let whenDependencyFails: DependencyFailureBehavior =
                Bool.random(using: &generator) ? .runAnyway : .skip
            let behaviour = SimulatedBody.allCases.randomElement(using: &generator)!
            graph.add(
                id, dependsOn: .on(dependencies),
                options: TaskOptions(
                    priority: priority, timeout: timeout, retry: retry, failure: failure,
                    whenDependencyFails: whenDependencyFails), body(id, behaviour, log: log, simulation: simulation))
            settings.append(
                "\(id) after \(dependencies) \(behaviour) priority \(priority.rawValue) timeout "
                    + "\(timeout.map { "\($0)" } ?? "none") attempts \(retry.maxAttempts) \(failure)")
            ids.append(id)
        }
        graph.addMilestone("m", after: Array(ids.shuffled(using: &generator).prefix(2)))
        var requests: [(yields: Int, request: Request)] = []
        for number in 0..<Int.random(in: 0...4, using: &generator) {
            let request: Request =
                switch Int.random(in: 0..<5, using: &generator) {
                case 0, 1: .remove(ids.randomElement(using: &generator)!)
                case 2, 3:
                    .add(
                        "x\(number)", dependsOn: ids.randomElement(using: &generator)!,
                        timeout: Bool.random(using: &generator) ? .milliseconds(2) : nil)
                default: .cancel
                }
            requests.append((Int.random(in: 0...6, using: &generator), request))
        }
        let addedBehaviours = (0..<4).map { _ in SimulatedBody.allCases.randomElement(using: &generator)! }
        let limit: Int? = Bool.random(using: &generator) ? nil : Int.random(in: 1...2, using: &generator)

        let run = try graph.start(concurrencyLimit: limit, clock: simulation.clock)
        var removals: [Removal] = []
        var additions: [Addition] = []
        var stopped = false
        for (number, (yields, request)) in requests.enumerated() {
            for _ in 0..<yields { await Task.yield() }
            switch request {
            case .remove(let id):
                let answer = try run.remove(id)
                removals.append(Removal(id: id, answer: answer, position: log.count))
            case .add(let id, let dependency, let timeout):
                do throws(GraphError) {
                    try run.add(
                        id, dependsOn: [dependency],
                        options: TaskOptions(timeout: timeout, failure: .optional),
                        body(id, addedBehaviours[number % 4], log: log, simulation: simulation))
                    additions.append(Addition(id: id, error: nil, afterCancel: stopped))
                    if timeout != nil { timed.insert(id) }
                } catch {
                    additions.append(Addition(id: id, error: error.code, afterCancel: stopped))
                }
            case .cancel:
                run.cancel()
                log.markStopped()
                stopped = true
            }
        }
        let report = try await run.report()
        let events = await run.events.collected()
        let milestone: Result<Duration, GraphError>
        do throws(GraphError) {
            milestone = .success(try await run.reached("m"))
        } catch {
            milestone = .failure(error)
        }
        return Ending(
            report: report, events: events, removals: removals, additions: additions, timed: timed, ids: ids,
            milestone: milestone, settings: settings)
    }

    // MARK: - The checks

    /// What happened, for a failure's message: the bodies' log, the removals and the events.
    private func story(_ ending: Ending, _ log: BodyLog) -> String {
        let removals = ending.removals.map { "remove(\($0.id)) → \($0.answer) at log \($0.position)" }
        return
            (["tasks:"] + ending.settings.map { "  \($0)" } + ["log:"]
            + log.entries.enumerated().map { "  \($0.offset): \($0.element)" } + removals + ["events:"]
            + ending.events.map { "  \($0)" }).joined(separator: "\n")
    }

    private func check(_ ending: Ending, log: BodyLog, seed: UInt64) {
        let report = ending.report
        let context = "seed \(seed)"
        let added = ending.additions.filter { $0.error == nil }.map(\.id)
        #expect(
            report.tasks.map(\.id).sorted() == (ending.ids + added).sorted(),
            "\(context): the report's tasks are not the tasks the run had")
        for addition in ending.additions {
            if addition.afterCancel {
                #expect(addition.error == .runFinished, "\(context): \(addition.id) was added after cancel()")
            } else if let error = addition.error {
                #expect(error == .runFinished, "\(context): adding \(addition.id) threw \(error)")
            }
        }
        // A task handed to a worker just before the stop may begin its body after `cancel()`
        // returned (the hop to the worker's child task); it must then begin cancelled.
        #expect(
            log.uncancelledBeginsAfterStop.isEmpty,
            "\(context): bodies began uncancelled after cancel(): \(log.uncancelledBeginsAfterStop)\n\(story(ending, log))"
        )

        for record in report.tasks {
            let id = record.id
            let attempts = log.attempts(of: id)
            if ending.timed.contains(id) {
                #expect(
                    attempts == attempts.sorted() && Set(attempts).count == attempts.count
                        && attempts.allSatisfy { $0 <= record.attempts },
                    "\(context): \(id) reported \(record.attempts) attempts, its bodies began \(attempts)")
            } else if attempts.isEmpty, record.attempts == 1, record.outcome.kind == .cancelled,
                report.outcome != .completed
            {
                // Handed to a worker as the run stopped: the hop to it found the run stopped,
                // and its body never began (its attempt was counted when it won its start).
            } else {
                #expect(
                    attempts == Array(0..<record.attempts).map { $0 + 1 },
                    "\(context): \(id) reported \(record.attempts) attempts, its bodies began \(attempts)")
            }
            let last = log.end(of: id, attempt: record.attempts)
            switch record.outcome.kind {
            case .succeeded:
                #expect(!record.wasRemoved, "\(context): \(id) reported succeeded and removed")
                #expect(
                    last == .returned,
                    "\(context): \(id) reported succeeded; its last body: \(String(describing: last))")
            case .failed:
                #expect(last == .threw, "\(context): \(id) reported failed; its last body: \(String(describing: last))")
            case .timedOut:
                #expect(ending.timed.contains(id), "\(context): \(id) timed out without a timeout")
            case .skipped:
                #expect(attempts.isEmpty, "\(context): \(id) was skipped, yet its body began")
            case .cancelled:
                // A removal while its body ran on a worker ends it cancelled whatever the body did.
                if !ending.timed.contains(id), !attempts.isEmpty, attempts.count == record.attempts, !record.wasRemoved
                {
                    #expect(last != .returned, "\(context): \(id)'s body returned on a worker, yet it is cancelled")
                }
            }
        }
        for removal in ending.removals where removal.answer != .alreadyEnded {
            var late = log.attempts(of: removal.id, from: removal.position)
            if removal.answer == .stillRunning, late.count == 1, late.first == report[removal.id]?.attempts {
                // Handed to a worker, its body not yet begun: it begins, runs to its end, and
                // no attempt follows it.
                late = []
            }
            #expect(
                late.isEmpty,
                "\(context): remove(\(removal.id)) answered \(removal.answer), then \(late) bodies began\n\(story(ending, log))"
            )
            // Every answer but `alreadyEnded` means the removal ended the task: `stillRunning`
            // too, once its body returned, whatever that body did.
            #expect(
                report[removal.id]?.outcome.kind == .cancelled && report[removal.id]?.wasRemoved == true,
                "\(context): remove(\(removal.id)) answered \(removal.answer); reported \(report[removal.id]!.outcome)"
            )
        }
        switch ending.milestone {
        case .success(let at):
            #expect(report.milestones.contains { $0.name == "m" && $0.at == at }, "\(context): milestone m")
        case .failure(let error):
            #expect(error.code == .milestoneMissed, "\(context): milestone m: \(error)")
            #expect(!report.milestones.contains { $0.name == "m" }, "\(context): m reached, yet reached() threw")
        }
        checkEvents(ending.events, against: report, context: context)
    }
}
