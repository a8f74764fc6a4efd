import ConductorTestKit
import Testing

@testable import ConductorCore
@testable import ConductorGraph

/// What a run holds per pending task (issue 36: `conductor-bench bytes memory.pending`), and
/// one task added to a running run checked without a graph built around it.
@Suite struct GraphStorageTests {
    // MARK: - Memory per pending task

    /// A graph, and every run of it, holds one definition per node: what only markers, stages,
    /// subtasks and hidden nodes have is boxed, so a plain task's definition stays small.
    @Test func aDefinitionKeepsItsThirtyTwoByteStride() {
        #expect(MemoryLayout<NodeDefinition>.stride == 32)
    }

    /// A blocker and `count` tasks that wait for it, inserted as a compiled graph.
    private static func pendingMachine(_ count: Int) -> GraphStateMachine {
        var graph = TaskGraph()
        graph.add("blocker") { _ in }
        for index in 0..<count { graph.add("t\(index)", dependsOn: ["blocker"]) { _ in } }
        var machine = GraphStateMachine(concurrencyLimit: .max, parallelWorkers: 1)
        var effects = GraphEffects()
        machine.insert(graph.definitions, compiled: CompiledGraph(graph.definitions), now: 0, effects: &effects)
        return machine
    }

    /// Tasks that wait get no room in the journal for records they have not made (it was three
    /// records, 48 bytes, a task), and the ready queue no room for roots they are not.
    @Test func pendingTasksReserveNoJournalRoomAndNoRoots() {
        let machine = Self.pendingMachine(1_000)
        #expect(machine.journal.endIndex == 1)  // "queued blocker"
        #expect(machine.journal.storage.capacity < 100)
        #expect(CompiledGraph(Self.graphOfPending(1_000)).independentCount == 1)
    }

    private static func graphOfPending(_ count: Int) -> [NodeDefinition] {
        var graph = TaskGraph()
        graph.add("blocker") { _ in }
        for index in 0..<count { graph.add("t\(index)", dependsOn: ["blocker"]) { _ in } }
        return graph.definitions
    }

    /// The first task that starts without room in the journal makes room for every record the
    /// nodes yet to end can make, at once: one copy of the journal, not one per doubling.
    @Test func theFirstTaskToStartWithoutRoomMakesRoomForAllThatRemain() throws {
        var machine = Self.pendingMachine(1_000)
        guard case .spawn(let blocker, _) = machine.nextForDriver(now: 1) else {
            Issue.record("the blocker was not handed out")
            return
        }
        var effects = GraphEffects()
        // The blocker's end queues the thousand; the worker takes the first of them.
        let next = try #require(
            machine.complete(blocker.node, outcome: .succeeded, startedAt: 1, now: 2, effects: &effects))
        #expect(machine.id(of: next.node) == "t0")
        let recorded = machine.journal.endIndex
        // Every node but the blocker is yet to end: 1,000 tasks, 2 records each still to come
        // at least (the first has started), and the run's last record.
        #expect(machine.journal.storage.capacity >= recorded + 2 * 1_000)
    }

    /// Counted as the graph is built, and zero once it stops compiling (a dependency added
    /// before what it names).
    @Test func aCompiledGraphCountsItsIndependentNodes() {
        var graph = TaskGraph()
        graph.add("a") { _ in }
        graph.add("b", dependsOn: ["a"]) { _ in }
        graph.add("c") { _ in }
        graph.addMilestone("m", after: ["b", "c"])
        #expect(CompiledGraph(graph.definitions).independentCount == 2)
        graph.add("d", dependsOn: ["later"]) { _ in }
        #expect(CompiledGraph(graph.definitions).independentCount == 0)
    }

    // MARK: - One task added to a running run

    /// What to add, once as `run.add(id, …)` and once as a graph of that one task.
    struct Addition: Sendable {
        let id: String
        var dependencies: TaskDependencies = .independent
        var options = TaskOptions()
    }

    /// The error of adding `addition` alone, and of adding it as a graph, to a run holding
    /// `held` (which waits on a latch until the check is done); `nil` where it was added.
    private static func errors(adding addition: Addition) async throws -> (alone: GraphError?, graph: GraphError?) {
        func add(_ body: (GraphRun) throws(GraphError) -> Void) async throws -> GraphError? {
            let gate = Latch()
            var graph = TaskGraph()
            graph.add("held") { _ in await gate.wait() }
            let run = try graph.start()
            var caught: GraphError?
            do { try body(run) } catch { caught = error }
            gate.open()
            _ = try await run.report()
            return caught
        }
        let alone = try await add { run throws(GraphError) in
            try run.add(addition.id, dependsOn: addition.dependencies, options: addition.options) { _ in }
        }
        let asGraph = try await add { run throws(GraphError) in
            var graph = TaskGraph()
            graph.add(addition.id, dependsOn: addition.dependencies, options: addition.options) { _ in }
            try run.add(graph)
        }
        return (alone, asGraph)
    }

    /// `run.add(id, …)` skips the graph, its index and the cycle search; it must still reject
    /// exactly what adding a graph of that one task rejects, with the same error — a task that
    /// depends on itself included (a cycle of one, which only the full check finds).
    @Test(arguments: [
        Addition(id: ""),
        Addition(id: "held"),
        Addition(id: "x", dependencies: ["ghost"]),
        Addition(id: "x", dependencies: ["x"]),
        Addition(id: "x", dependencies: ["held", "x"]),
        Addition(id: "x", dependencies: .inOrderOfAddition),
        Addition(id: "x", options: TaskOptions(timeout: .seconds(-1))),
        Addition(id: "x", options: TaskOptions(retry: .attempts(0))),
        Addition(id: "x", options: TaskOptions(limits: [TaskLimit(0, name: "none")])),
        Addition(id: "x", dependencies: ["held"]),
        Addition(id: "x"),
    ])
    func aTaskAddedAloneIsCheckedLikeAGraphOfOne(_ addition: Addition) async throws {
        let (alone, asGraph) = try await Self.errors(adding: addition)
        #expect(alone == asGraph)
        if addition.id == "x", addition.dependencies.names.allSatisfy({ $0 == "held" }),
            !addition.dependencies.isInOrderOfAddition, addition.options == TaskOptions()
        {
            #expect(alone == nil)
        } else {
            #expect(alone != nil)
        }
    }

    /// A closure that returns nothing takes the `Void` overload, whose body a worker calls
    /// without a wrapper; its value still reads as `()`.
    @Test func aVoidTaskAddedToARunHasAValue() async throws {
        let run = try TaskGraph().start(staysOpen: true)
        let handle: TaskHandle<Void> = try run.add("v") { _ in }
        try await run.value(of: handle)
        run.close()
        let report = try await run.report()
        #expect(report.outcome == .completed)
        #expect(report.tasks.map(\.id) == ["v"])
    }
}
