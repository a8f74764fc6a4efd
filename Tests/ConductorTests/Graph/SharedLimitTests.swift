import ConductorTestKit
import Testing

@testable import ConductorCore
@testable import ConductorGraph

/// How many bodies are inside each limit at once, and the most ever seen.
final class LimitGauge: Sendable {
    private let state = Lock<(inside: [Int], most: [Int])>(([], []))

    init(limits: Int) {
        state.withLock { $0 = (Array(repeating: 0, count: limits), Array(repeating: 0, count: limits)) }
    }

    func enter(_ limits: [Int]) {
        state.withLock { state in
            for limit in limits {
                state.inside[limit] += 1
                state.most[limit] = max(state.most[limit], state.inside[limit])
            }
        }
    }

    func leave(_ limits: [Int]) { state.withLock { state in for limit in limits { state.inside[limit] -= 1 } } }

    var most: [Int] { state.withLock { $0.most } }
    var inside: [Int] { state.withLock { $0.inside } }
}

/// Shared limits across runs, end to end: bodies counted on entry and exit.
@Suite struct SharedLimitTests {
    /// Three runs of a graph whose tasks name one `TaskLimit(1)`: never two bodies at once,
    /// though each run alone would run them all together. Each body yields many times, so
    /// without the shared limit the runs' bodies interleave (a per-run `concurrencyLimit: 1`
    /// lets three in at once, one per run).
    @Test func threeRunsShareOnePlace() async throws {
        let limit = TaskLimit(1, name: "database")
        let gauge = LimitGauge(limits: 1)
        var graph = TaskGraph()
        for index in 0..<8 {
            graph.add("t\(index)", options: TaskOptions(limits: [limit])) { _ in
                gauge.enter([0])
                for _ in 0..<20 { await Task.yield() }
                gauge.leave([0])
            }
        }
        let built = graph  // a constant, so three tasks can share it
        async let first = built.run()
        async let second = built.run()
        async let third = built.run()
        let reports = try await [first, second, third]
        #expect(reports.allSatisfy { $0.isSuccess })
        #expect(gauge.most == [1])
        #expect(limit.snapshot == (0, 0))
    }

    /// A body abandoned by its timeout keeps its place until it returns: the task after it,
    /// which names the same limit, does not begin while that body is still inside.
    @Test func anAbandonedBodyKeepsItsPlaceUntilItReturns() async throws {
        let clock = ManualClock()
        let limit = TaskLimit(1, name: "slot")
        let gauge = LimitGauge(limits: 1)
        let (entered, release) = (Latch(), Latch())
        var graph = TaskGraph()
        graph.add("stubborn", options: TaskOptions(timeout: .seconds(1), failure: .optional, limits: [limit])) { _ in
            gauge.enter([0])
            entered.open()
            await release.wait()
            gauge.leave([0])
        }
        let after = TaskOptions(whenDependencyFails: .runAnyway, limits: [limit])
        graph.add("next", dependsOn: ["stubborn"], options: after) { _ in
            gauge.enter([0])
            gauge.leave([0])
        }
        let run = try graph.start(clock: clock)
        await entered.wait()
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(1))
        for await event in run.events {
            if case .taskQueued("next", _) = event { break }
        }
        // "stubborn" has ended (timed out) and "next" is queued, but the abandoned body holds
        // the one place.
        #expect(gauge.inside == [1])
        #expect(limit.snapshot.inUse == 1)
        release.open()
        let report = try await run.report()
        #expect("\(report["stubborn"]!.outcome)".hasPrefix("timed out"))
        #expect(report["next"]?.outcome.isSuccess == true)
        #expect(gauge.most == [1])
        #expect(limit.snapshot == (0, 0))
    }

    /// Random graphs in three runs started at once share three limits of capacity 1–3: each
    /// limited body counts itself in on entry and out on exit (an abandoned one until it
    /// returns), and no limit ever holds more than its capacity. Some tasks time out at once
    /// (their bodies linger), some retry, some fail; every task ends once, and the places all
    /// come back — with some runs paused and resumed meanwhile, and some bodies adding subtasks
    /// and joining them (their ids and parents in the report).
    @Test(arguments: StressConfiguration.seeds(default: 60, base: 0x35A1_0001))
    func randomRunsNeverExceedALimit(seed: UInt64) async throws {
        var generator = SeededGenerator(seed: seed)
        let capacities = (0..<3).map { _ in Int.random(in: 1...3, using: &generator) }
        let limits = capacities.enumerated().map { TaskLimit($1, name: "L\($0)") }
        let gauge = LimitGauge(limits: 3)
        let violations = Recorder<String>()
        let bodies = Recorder<String>()
        let subtaskIDs = (0..<3).map { _ in Recorder<String>() }
        var runs: [GraphRun] = []
        var shapes: [[(id: String, dependencies: [String])]] = []
        for runIndex in 0..<3 {
            let added = subtaskIDs[runIndex]
            let shape = RandomGraphTests.randomDAG(&generator, nodes: Int.random(in: 1...25, using: &generator))
            shapes.append(shape)
            var graph = TaskGraph()
            for node in shape {
                let named = Array(
                    Set(
                        (0..<Int.random(in: 0...2, using: &generator)).map { _ in
                            Int.random(in: 0..<3, using: &generator)
                        })
                ).sorted()
                let kind = Int.random(in: 0..<8, using: &generator)
                let options = TaskOptions(
                    priority: [.low, .medium, .high][Int.random(in: 0..<3, using: &generator)],
                    timeout: kind == 0 ? .zero : nil,
                    retry: kind == 1 ? .attempts(2, backoff: .zero) : .never,
                    failure: .optional,
                    whenDependencyFails: .runAnyway,
                    limits: named.map { limits[$0] })
                let fails = kind == 1 || kind == 2
                let yields = Int.random(in: 0...3, using: &generator)
                // Some plain bodies add subtasks and join them. A parent that holds places adds
                // subtasks that need none, and only a parent that holds none adds subtasks that
                // name limits: a parent keeps its places while it joins, so a subtask waiting
                // for a place another joining parent holds could wait for ever.
                let subtasks: [[Int]] =
                    kind == 3 || kind == 4
                    ? (0..<Int.random(in: 1...2, using: &generator)).map { _ in
                        named.isEmpty ? [Int.random(in: 0..<3, using: &generator)] : []
                    } : []
                graph.add(node.id, dependsOn: .on(node.dependencies), options: options) { context in
                    gauge.enter(named)
                    for limit in named where gauge.inside[limit] > capacities[limit] {
                        violations.append("L\(limit) over \(capacities[limit])")
                    }
                    bodies.append(node.id)
                    for (index, subNamed) in subtasks.enumerated() {
                        let subtask = try context.addSubtask(
                            "s\(index)", options: TaskOptions(failure: .optional, limits: subNamed.map { limits[$0] })
                        ) { _ in
                            gauge.enter(subNamed)
                            for limit in subNamed where gauge.inside[limit] > capacities[limit] {
                                violations.append("L\(limit) over \(capacities[limit]) in a subtask")
                            }
                            await Task.yield()
                            gauge.leave(subNamed)
                        }
                        added.append(subtask.id)
                    }
                    if !subtasks.isEmpty { try await context.join() }
                    for _ in 0..<yields { await Task.yield() }
                    gauge.leave(named)
                    if fails { throw Fault() }
                }
            }
            runs.append(try graph.start())
        }
        // Some runs pause and resume a few times: a paused run gives back the places of tasks
        // it has not started, and asks again on resume.
        for _ in 0..<Int.random(in: 0...4, using: &generator) {
            let run = runs[Int.random(in: 0..<3, using: &generator)]
            run.pause()
            for _ in 0..<Int.random(in: 0...3, using: &generator) { await Task.yield() }
            run.resume()
        }
        var reports: [RunReport] = []
        for run in runs { reports.append(try await run.report()) }
        #expect(violations.all.isEmpty, "seed \(seed): \(violations.all)")
        for ((shape, report), added) in zip(zip(shapes, reports), subtaskIDs) {
            let expected = Set(shape.map(\.id)).union(added.all)
            #expect(report.tasks.count == expected.count, "seed \(seed)")
            #expect(Set(report.tasks.map(\.id)) == expected, "seed \(seed)")
            for record in report.tasks where record.id.contains("/") {
                #expect(record.parent == String(record.id.split(separator: "/")[0]), "seed \(seed)")
            }
        }
        // Abandoned bodies may still be on their way out; once they are, every place is back.
        for limit in limits {
            while limit.snapshot.inUse > 0 { await Task.yield() }
            #expect(limit.snapshot == (0, 0), "seed \(seed)")
        }
    }

    private struct Fault: Error {}
}
