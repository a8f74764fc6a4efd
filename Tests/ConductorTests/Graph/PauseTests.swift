import ConductorTestKit
import Testing

@testable import ConductorCore
@testable import ConductorGraph

/// Pausing a run, end to end: nothing starts while paused, running bodies go on, additions and
/// removals work, and the run goes on after the resume.
@Suite struct PauseTests {
    private struct Fault: Error {}

    /// Every event of a run that has finished.
    static func events(of run: GraphRun) async -> [GraphEvent] {
        var events: [GraphEvent] = []
        for await event in run.events { events.append(event) }
        return events
    }

    /// A task added while paused waits for the resume, while the body that was running ends.
    @Test func aTaskAddedWhilePausedStartsOnlyAfterTheResume() async throws {
        let gate = Latch()
        var graph = TaskGraph()
        graph.add("running") { _ in await gate.wait() }
        let run = try graph.start()
        var events = run.events.makeAsyncIterator()
        while let event = await events.next() {
            if case .taskStarted("running", _, _) = event { break }
        }
        let pausedAt = run.storage.pause()
        #expect(run.isPaused)
        try run.add("later") { _ in }
        gate.open()
        while let event = await events.next() {
            if case .taskSucceeded("running", _) = event { break }
        }
        let resumedAt = run.storage.resume()
        #expect(!run.isPaused)
        let report = try await run.report()
        #expect(report["later"]?.outcome.isSuccess == true)
        let all = await Self.events(of: run)
        let started = all.indices.filter { if case .taskStarted("later", _, _) = all[$0] { true } else { false } }
        #expect(started.count == 1 && started[0] >= resumedAt && resumedAt >= pausedAt)
    }

    /// A paused run whose tasks have all ended finishes; pausing a finished run does nothing.
    @Test func aPausedRunWhoseTasksEndedFinishes() async throws {
        let gate = Latch()
        var graph = TaskGraph()
        graph.add("only") { _ in await gate.wait() }
        let run = try graph.start()
        for await event in run.events {
            if case .taskStarted = event { break }
        }
        run.pause()
        gate.open()
        let report = try await run.report()
        #expect(report.isSuccess)
        run.pause()
        run.resume()
    }

    /// Cancelling a paused run ends it; its waiting tasks end cancelled.
    @Test func cancellingAPausedRunEndsIt() async throws {
        let gate = Latch()
        var graph = TaskGraph()
        graph.add("held") { _ in await gate.wait() }
        let run = try graph.start(concurrencyLimit: 1)
        run.pause()
        try run.add("a") { _ in }
        try run.add("b", dependsOn: ["a"]) { _ in }
        run.cancel()
        gate.open()
        let report = try await run.report()
        #expect(report["a"]?.outcome.kind == .cancelled && report["b"]?.outcome.kind == .cancelled)
        #expect(!run.isPaused)
    }

    /// Random pause, resume, add, remove and cancel (seeded) over a random graph whose tasks
    /// yield, some failing once and retrying: no task starts (first attempt or retry) between
    /// a pause and the next resume, every task ends once, and the run ends after a final resume.
    @Test(arguments: StressConfiguration.seeds(default: 100, base: 0x35A2_0001))
    func nothingStartsWhilePaused(seed: UInt64) async throws {
        var generator = SeededGenerator(seed: seed)
        let shape = RandomGraphTests.randomDAG(&generator, nodes: Int.random(in: 1...20, using: &generator))
        let failedOnce = Recorder<String>()
        func body(_ id: String, yields: Int, failsOnce: Bool) -> @Sendable (TaskContext) async throws -> Void {
            { context in
                for _ in 0..<yields { await Task.yield() }
                if failsOnce, context.attempt == 1 {
                    failedOnce.append(id)
                    throw Fault()
                }
            }
        }
        func options(_ generator: inout SeededGenerator) -> (TaskOptions, Bool) {
            let failsOnce = Int.random(in: 0..<4, using: &generator) == 0
            let retry: RetryPolicy = failsOnce ? .attempts(2, backoff: .zero) : .never
            return (TaskOptions(retry: retry, failure: .optional, whenDependencyFails: .runAnyway), failsOnce)
        }
        var graph = TaskGraph()
        for node in shape {
            let (options, failsOnce) = options(&generator)
            let yields = Int.random(in: 0...3, using: &generator)
            graph.add(
                node.id, dependsOn: .on(node.dependencies), options: options,
                body(node.id, yields: yields, failsOnce: failsOnce))
        }
        let run = try graph.start(concurrencyLimit: Int.random(in: 1...3, using: &generator))
        var ids = shape.map(\.id)
        var pauses: [(from: Int, to: Int)] = []
        var pausedAt: Int?
        for step in 0..<Int.random(in: 1...15, using: &generator) {
            switch Int.random(in: 0..<10, using: &generator) {
            case 0..<3:
                if pausedAt == nil { pausedAt = run.storage.pause() }
            case 3..<5:
                let resumedAt = run.storage.resume()
                if let from = pausedAt { pauses.append((from, resumedAt)) }
                pausedAt = nil
            case 5..<8:
                let (options, failsOnce) = options(&generator)
                let dependsOn =
                    ids.isEmpty || Bool.random(using: &generator) ? [] : [ids.randomElement(using: &generator)!]
                let id = "added\(step)"
                if (try? run.add(
                    id, dependsOn: .on(dependsOn), options: options, body(id, yields: 1, failsOnce: failsOnce))) != nil
                {
                    ids.append(id)
                }
            case 8:
                if let id = ids.randomElement(using: &generator) { _ = try? run.remove(id) }
            default:
                if Int.random(in: 0..<4, using: &generator) == 0 { run.cancel() }
            }
            for _ in 0..<Int.random(in: 0...3, using: &generator) { await Task.yield() }
        }
        let resumedAt = run.storage.resume()
        if let from = pausedAt { pauses.append((from, resumedAt)) }
        let report = try await run.report()
        let events = await Self.events(of: run)
        for (index, event) in events.enumerated() {
            guard case .taskStarted(let id, let attempt, _) = event else { continue }
            for pause in pauses where pause.from <= index && index < pause.to {
                Issue.record("seed \(seed): \(id) #\(attempt) started at \(index), inside the pause \(pause)")
            }
        }
        var ended: [String: Int] = [:]
        for event in events {
            switch event {
            case .taskSucceeded(let id, _), .taskFailed(let id, _, _), .taskSkipped(let id, _, _),
                .taskCancelled(let id, _), .taskTimedOut(let id, _):
                ended[id, default: 0] += 1
            default: break
            }
        }
        #expect(Set(ended.keys) == Set(ids), "seed \(seed)")
        #expect(ended.values.allSatisfy { $0 == 1 }, "seed \(seed)")
        #expect(report.tasks.count == ids.count, "seed \(seed)")
    }
}
