import Testing

@testable import ConductorAssembly
@testable import ConductorCore
@testable import ConductorGate
@testable import ConductorGraph
@testable import ConductorHarmonizer
@testable import ConductorLaunch
@testable import ConductorReports

/// The launcher's bookkeeping without any concurrency: how chains and dependencies compile.
@Suite struct LaunchPlanTests {
    @Test func chainedTasksRunAfterAMarkerThatWaitsForEverythingBefore() throws {
        var plan = LaunchPlan()
        for name in ["a", "b", "c"] {
            let entry = LaunchPlan.Entry.task(.init(TestStartupTask(name)))
            try plan.admit(entry)
            plan.keep(entry)
        }
        let definitions = plan.compileEntries()
        let tasks = definitions.filter { !$0.isHidden }
        let markers = definitions.filter(\.isHidden)
        #expect(tasks.map(\.id) == ["a", "b", "c"])
        #expect(tasks[0].after.isEmpty)
        #expect(tasks[1].after == [markers[0].id])
        #expect(markers[1].after == ["b", markers[0].id])
        #expect(tasks[2].after == [markers[1].id])
        #expect(plan.compiledTasks == ["a", "b", "c"])
    }

    @Test func tasksWithDependenciesStayOutOfTheChain() throws {
        var plan = LaunchPlan()
        var definitions: [NodeDefinition] = []
        for entry in [
            LaunchPlan.Entry.task(.init(TestStartupTask("a"))),
            .task(.init(TestStartupTask("b", dependencies: ["a"]))),
            .readiness("ready", after: ["b"]),
            .task(.init(TestStartupTask("c"))),
        ] {
            try plan.admit(entry)
            plan.compile(entry, into: &definitions)
        }
        let b = try #require(definitions.first { $0.id == "b" })
        #expect(b.requires == ["a"])
        #expect(b.after.isEmpty)
        let c = try #require(definitions.first { $0.id == "c" })
        #expect(c.after.count == 1)
        #expect(definitions.first { $0.id == c.after[0] }?.after.first == "a")
        #expect(plan.isReadiness("ready"))
    }

    @Test func forgettingBeforeTheLaunchFreesTheName() throws {
        var plan = LaunchPlan()
        let entry = LaunchPlan.Entry.task(.init(TestStartupTask("a")))
        try plan.admit(entry)
        plan.keep(entry)
        let first = plan.forget("a")
        let second = plan.forget("a")
        #expect(first)
        #expect(!second)
        try plan.admit(entry)
    }
}
