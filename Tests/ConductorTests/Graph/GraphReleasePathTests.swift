import Testing

@testable import ConductorAssembly
@testable import ConductorCore
@testable import ConductorGate
@testable import ConductorGraph
@testable import ConductorHarmonizer
@testable import ConductorLaunch
@testable import ConductorReports

/// A task that succeeds releases its successors through a one-pass path of its own
/// (`releaseSuccessorsOfSucceeded`), which hands over to the general path at the first
/// successor that needs more (a marker, a task a failed dependency blocks). Successors wired
/// by a run's additions always take the general path. So the same graph, inserted once as a
/// compiled graph (flat successor table) and once as additions, must record the same events
/// in the same order and end every node the same way — whatever mix of tasks, milestones,
/// failures and skips it holds. The state machine alone, driven by hand, one task at a time.
@Suite struct GraphReleasePathTests {
    private struct Failure: Error {}

    /// A random graph: tasks depending on up to three earlier nodes, a milestone now and then,
    /// some optional tasks that fail (their dependents skip, or run anyway).
    private static func randomGraph(seed: UInt64) -> (graph: TaskGraph, failing: Set<String>) {
        var random = SplitMix64(seed: seed)
        var graph = TaskGraph()
        var ids: [String] = []
        var failing: Set<String> = []
        for index in 0..<40 {
            var dependencies: Set<String> = []
            for _ in 0..<Int.random(in: 0...3, using: &random) {
                if let id = ids.randomElement(using: &random) { dependencies.insert(id) }
            }
            if index % 7 == 6 {
                let name = "m\(index)"
                graph.addMilestone(name, after: dependencies.sorted())
                ids.append(name)
                continue
            }
            let id = "t\(index)"
            let fails = Int.random(in: 0..<5, using: &random) == 0
            if fails { failing.insert(id) }
            graph.add(
                id, dependsOn: .on(dependencies.sorted()),
                options: TaskOptions(
                    failure: fails ? .optional : .required,
                    whenDependencyFails: Bool.random(using: &random) ? .skip : .runAnyway)
            ) { _ in }
            ids.append(id)
        }
        return (graph, failing)
    }

    private struct Trace: Equatable {
        var records: [String] = []
        var outcomes: [String] = []
    }

    /// Runs `graph` to its end in a machine, one task at a time, failing the tasks in
    /// `failing`; every transition gets the next tick as its time.
    private static func trace(of graph: TaskGraph, failing: Set<String>, compiled: Bool) -> Trace {
        var machine = GraphStateMachine(concurrencyLimit: .max, parallelWorkers: 1)
        var effects = GraphEffects()
        let table = compiled ? CompiledGraph(graph.definitions) : nil
        #expect(!compiled || table?.count == graph.definitions.count, "the graph compiles")
        machine.insert(graph.definitions, compiled: table, now: 0, effects: &effects)
        var now: Int64 = 1
        driving: while true {
            switch machine.nextForDriver(now: now) {
            case .spawn(let first, _):
                var assignment: GraphStateMachine.Assignment? = first
                while let current = assignment {
                    now += 1
                    let id = machine.id(of: current.node)
                    let outcome: TaskOutcome = failing.contains(id) ? .failed(Failure()) : .succeeded
                    assignment = machine.complete(
                        current.node, outcome: outcome, startedAt: now - 1, now: now, effects: &effects)
                }
            case .cancelAll:
                continue
            case .wait, .finish:
                break driving
            }
        }
        var trace = Trace()
        for record in machine.journal.snapshot {
            let subject =
                record.kind == .other
                ? String(describing: machine.rareEvents[Int(record.subject)])
                : machine.id(of: Int(record.subject))
            trace.records.append("\(record.kind) \(subject) at \(record.time)")
        }
        let report = RunReport(of: machine)
        for definition in graph.definitions where !definition.isHidden {
            trace.outcomes.append("\(definition.id): \(String(describing: report[definition.id]?.outcome.kind))")
        }
        #expect(machine.outcome != nil, "the run finished")
        return trace
    }

    @Test(arguments: 0..<40)
    func theOnePassPathRecordsWhatTheGeneralPathRecords(seed: UInt64) {
        let (graph, failing) = Self.randomGraph(seed: seed)
        let onePass = Self.trace(of: graph, failing: failing, compiled: true)
        let general = Self.trace(of: graph, failing: failing, compiled: false)
        // Every one of the 34 tasks records at least its end (a skipped task nothing else).
        #expect(onePass.records.count >= 34)
        #expect(onePass == general, "seed \(seed)")
    }
}
