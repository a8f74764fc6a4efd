import Testing

@testable import ConductorAssembly
@testable import ConductorCore
@testable import ConductorGate
@testable import ConductorGraph
@testable import ConductorHarmonizer
@testable import ConductorLaunch
@testable import ConductorReports

extension GraphStateMachine {
    /// A machine running `graph`, whose first task the driver has handed to a worker (a task
    /// whose body runs in a task of its own has its first attempt registered), and that task's
    /// node: the state machine alone, for tests that drive each side of a race by hand.
    static func handingOutTheFirstTask(of graph: TaskGraph) throws -> (GraphStateMachine, node: Int) {
        var machine = GraphStateMachine(concurrencyLimit: .max, parallelWorkers: 1)
        var effects = GraphEffects()
        machine.insert(graph.definitions, now: 0, effects: &effects)
        guard case .spawn(let assignment, _) = machine.nextForDriver(now: 0) else {
            Issue.record("the first task was not handed to a worker")
            throw CancellationError()
        }
        return (machine, assignment.node)
    }
}

extension GraphStateMachine {
    /// The driver's next action, for tests that have no use for its effects (a rejoining
    /// parent's resumption is the only one).
    mutating func nextForDriver(now: Int64) -> DriverAction {
        var effects = GraphEffects()
        return nextForDriver(now: now, effects: &effects)
    }
}
