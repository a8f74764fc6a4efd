import Testing

@testable import ConductorAssembly
@testable import ConductorCore
@testable import ConductorGate
@testable import ConductorGraph
@testable import ConductorHarmonizer
@testable import ConductorLaunch
@testable import ConductorReports

@Suite struct GraphValidationTests {
    @Test func cycleListsItsPath() throws {
        var graph = TaskGraph()
        graph.add("a", dependsOn: ["c"]) { _ in }
        graph.add("b", dependsOn: ["a"]) { _ in }
        graph.add("c", dependsOn: ["b"]) { _ in }
        let error = try #require(throws: GraphError.self) { try graph.validate() }
        #expect(error.code == .cycle)
        #expect(error.message == "dependencies form a loop: a → c → b → a")
    }

    @Test func selfDependencyIsACycle() throws {
        var graph = TaskGraph()
        graph.add("a", dependsOn: ["a"]) { _ in }
        let error = try #require(throws: GraphError.self) { try graph.validate() }
        #expect(error.message == "dependencies form a loop: a → a")
    }

    @Test func unknownDependencyNamesTaskAndMissingID() throws {
        var graph = TaskGraph()
        graph.add("sku", dependsOn: ["basicInfo"]) { _ in }
        let error = try #require(throws: GraphError.self) { try graph.validate() }
        #expect(error.code == .unknownDependency)
        #expect(error.message == "task 'sku' depends on unknown id 'basicInfo'")
        #expect(error.taskID == "sku")
    }

    @Test func duplicateAndEmptyIDs() throws {
        var graph = TaskGraph()
        graph.add("a") { _ in }
        graph.add("a") { _ in }
        #expect(throws: GraphError.duplicateID("a")) { try graph.validate() }
        var empty = TaskGraph()
        empty.add("") { _ in }
        #expect(throws: GraphError.emptyID()) { try empty.validate() }
        var milestoneClash = TaskGraph()
        milestoneClash.add("a") { _ in }
        milestoneClash.addMilestone("a", after: [])
        #expect(throws: GraphError.duplicateID("a")) { try milestoneClash.validate() }
    }

    /// Nothing may start when validation fails: the bad graph's valid tasks never run.
    @Test func invalidGraphStartsNothing() async throws {
        let ran = Recorder<String>()
        var graph = TaskGraph()
        graph.add("fine") { _ in ran.append("fine") }
        graph.add("bad", dependsOn: ["nowhere"]) { _ in ran.append("bad") }
        #expect(throws: GraphError.self) { try graph.start() }
        await #expect(throws: GraphError.self) { try await graph.run() }
        #expect(ran.all.isEmpty)
    }

    @Test func removeAndRemoveAllBeforeStart() async throws {
        var graph = TaskGraph()
        graph.add("a") { _ in }
        graph.add("b") { _ in }
        let removed = graph.remove("a")
        let removedAgain = graph.remove("a")
        #expect(removed)
        #expect(!removedAgain)
        #expect(graph.ids == ["b"])
        graph.removeAll()
        #expect(graph.ids.isEmpty)
        let report = try await graph.run()
        #expect(report.isSuccess)
        #expect(report.tasks.isEmpty)
    }
}

@Suite struct GraphOrderTests {
    /// Regression: a valid graph whose tasks name dependencies added after them used to index
    /// past the end of the run's table.
    @Test func dependenciesMayBeAddedAfterTheirDependents() async throws {
        let order = Recorder<String>()
        var graph = TaskGraph()
        graph.add("page", dependsOn: ["basicInfo", "sku"]) { _ in order.append("page") }
        graph.add("sku", dependsOn: ["basicInfo"]) { _ in order.append("sku") }
        graph.add("basicInfo") { _ in order.append("basicInfo") }
        try graph.validate()
        let report = try await graph.run()
        #expect(report.isSuccess)
        #expect(order.all == ["basicInfo", "sku", "page"])
    }

    @Test func removingATaskRevalidates() throws {
        var graph = TaskGraph()
        graph.add("a") { _ in }
        graph.add("b", dependsOn: ["a"]) { _ in }
        try graph.validate()
        graph.remove("a")
        #expect(throws: GraphError.unknownDependency("a", of: "b")) { try graph.validate() }
    }
}
