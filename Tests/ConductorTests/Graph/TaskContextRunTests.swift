import ConductorTestKit
import Testing

@testable import ConductorGraph

/// A body reaches its own run through ``TaskContext/run``: what it adds, the run waits for;
/// what it awaits is the run's own milestone.
@Suite struct TaskContextRunTests {
    @Test func aBodyAddsATaskToItsOwnRunAndTheRunWaitsForIt() async throws {
        let ran = Recorder<String>()
        var graph = TaskGraph()
        graph.add("parent") { context in
            try context.run.add("child", dependsOn: ["parent"]) { context in
                ran.append("child")
                return try context.value(of: TaskHandle<Int>(id: "parent")) + 1
            }
            return 1
        }
        let report = try await graph.run()
        #expect(report.outcome == .completed)
        #expect(report.tasks.map(\.id) == ["parent", "child"])
        #expect(report["child"]?.outcome.kind == .succeeded)
        #expect(ran.all == ["child"])
        let child = try #require(report["child"])
        let parentRecord = try #require(report["parent"])
        #expect(try #require(child.startedAt) >= parentRecord.endedAt)
    }

    /// The added task runs after its parent has ended: a run that did not wait for it would
    /// have finished with it unstarted (cancelled), or without it.
    @Test func aTaskAddedByABodyOfAStartedRunIsInItsReport() async throws {
        let gate = Latch()
        var graph = TaskGraph()
        graph.add("parent") { context in
            try context.run.add("child", dependsOn: ["parent"]) { _ in await gate.wait() }
        }
        let run = try graph.start()
        let waiting = Task { try await run.report() }
        gate.open()
        let report = try await waiting.value
        #expect(report.outcome == .completed)
        #expect(report["child"]?.outcome.kind == .succeeded)
    }

    @Test func aBodyAwaitsAMilestoneOfItsRun() async throws {
        let waiterStarted = Latch()
        var graph = TaskGraph()
        let config = graph.add("config") { _ in
            await waiterStarted.wait()
            return 42
        }
        graph.addMilestone("configured", after: ["config"])
        graph.add("waiter") { context in
            waiterStarted.open()
            try await context.run.reached("configured")
            return try context.value(of: config)
        }
        let report = try await graph.run()
        #expect(report.outcome == .completed)
        #expect(report["waiter"]?.outcome.kind == .succeeded)
        #expect(report.milestones.map(\.name) == ["configured"])
        let waiter = try #require(report["waiter"])
        let configRecord = try #require(report["config"])
        #expect(waiter.endedAt >= configRecord.endedAt)
    }

    @Test func aBodyRemovesAPendingTaskOfItsRun() async throws {
        var graph = TaskGraph()
        let removal = Recorder<TaskRemoval>()
        graph.add("chooser") { context in removal.append(try context.run.remove("notTaken")) }
        graph.add("notTaken", dependsOn: ["chooser"]) { _ in Issue.record("a removed task ran") }
        let report = try await graph.run()
        #expect(removal.all == [.prevented])
        #expect(report.outcome == .completed)
        #expect(report["notTaken"]?.outcome.kind == .cancelled)
    }
}
