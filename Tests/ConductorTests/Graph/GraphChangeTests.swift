import ConductorTestKit
import Testing

@testable import ConductorAssembly
@testable import ConductorCore
@testable import ConductorGate
@testable import ConductorGraph
@testable import ConductorHarmonizer
@testable import ConductorLaunch
@testable import ConductorReports

@Suite struct GraphChangeTests {
    @Test func tasksAddedDuringARunMayDependOnFinishedRunningAndPendingTasks() async throws {
        let gate = Latch()
        let started = Latch()
        var graph = TaskGraph()
        let finished = graph.add("finished") { _ in 1 }
        graph.add("running", dependsOn: ["finished"]) { _ in
            started.open()
            await gate.wait()
            return 2
        }
        graph.add("pending", dependsOn: ["running"]) { _ in 3 }
        let run = try graph.start()
        await started.wait()
        let seen = Recorder<Int>()
        try run.add("late", dependsOn: ["finished", "running", "pending"]) { context in
            seen.append(try context.value(of: finished))
        }
        var batch = TaskGraph()
        batch.add("x") { _ in }
        batch.add("y", dependsOn: ["x", "late"]) { _ in }
        try run.add(batch)
        gate.open()
        let report = try await run.report()
        #expect(report.isSuccess)
        #expect(seen.all == [1])
        #expect(report.tasks.map(\.id) == ["finished", "running", "pending", "late", "x", "y"])
        let late = try #require(report["late"])
        let pending = try #require(report["pending"])
        #expect(late.startedAt! >= pending.endedAt)
    }

    @Test func invalidAdditionsAreRejectedAndNothingIsAdded() async throws {
        let gate = Latch()
        var graph = TaskGraph()
        graph.add("a") { _ in await gate.wait() }
        let run = try graph.start()
        #expect(throws: GraphError.unknownDependency("ghost", of: "b")) {
            try run.add("b", dependsOn: ["ghost"]) { _ in }
        }
        #expect(throws: GraphError.duplicateID("a")) { try run.add("a") { _ in } }
        var cyclic = TaskGraph()
        cyclic.add("p", dependsOn: ["q", "a"]) { _ in }
        cyclic.add("q", dependsOn: ["p"]) { _ in }
        let error = try #require(throws: GraphError.self) { try run.add(cyclic) }
        #expect(error.message == "dependencies form a loop: p → q → p")
        gate.open()
        let report = try await run.report()
        #expect(report.tasks.map(\.id) == ["a"])
        #expect(throws: GraphError.runFinished(adding: "late")) { try run.add("late") { _ in } }
    }

    @Test func removedPendingTaskNeverStarts() async throws {
        let gate = Latch()
        let ran = Recorder<String>()
        var graph = TaskGraph()
        graph.add("first") { _ in await gate.wait() }
        graph.add("removed", dependsOn: ["first"]) { _ in ran.append("removed") }
        graph.add("dependent", dependsOn: ["removed"]) { _ in ran.append("dependent") }
        graph.add("independent", dependsOn: ["first"]) { _ in ran.append("independent") }
        let run = try graph.start()
        #expect(try run.remove("removed") == .prevented)
        #expect(throws: GraphError.unknownTask("nope")) { try run.remove("nope") }
        gate.open()
        let report = try await run.report()
        #expect(ran.all == ["independent"])
        #expect("\(report["removed"]!.outcome)" == "cancelled")
        #expect("\(report["dependent"]!.outcome)" == "skipped ('removed' did not succeed)")
        #expect(try run.remove("first") == .alreadyEnded)
    }
}
