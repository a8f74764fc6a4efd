import Testing

@testable import ConductorAssembly
@testable import ConductorCore
@testable import ConductorGate
@testable import ConductorGraph
@testable import ConductorHarmonizer
@testable import ConductorLaunch
@testable import ConductorReports

/// Removing a task with retries whose body runs on one of the run's workers (no timeout): the
/// body cannot be stopped, but no attempt follows it. The state machine alone, so the removal
/// lands exactly while the body runs.
@Suite struct GraphRemovalTests {
    private struct Failure: Error {}

    private func started() throws -> (GraphStateMachine, node: Int) {
        var graph = TaskGraph()
        graph.add("sync", options: TaskOptions(retry: .attempts(3, backoff: .zero))) { _ in }
        graph.add("after", dependsOn: ["sync"]) { _ in }
        return try GraphStateMachine.handingOutTheFirstTask(of: graph)
    }

    @Test func aBodyThatFailsAfterTheRemovalIsNotRetried() throws {
        var (machine, node) = try started()
        var effects = GraphEffects()
        let removal = machine.remove("sync", now: 1, effects: &effects)
        #expect(removal == .stillRunning)
        let retries = machine.attemptFailed(node, attempt: 1, error: Failure(), delay: .zero, now: 2, effects: &effects)
        #expect(!retries)
        let retryStarts = machine.retryStarting(node, attempt: 2, now: 3)
        #expect(retryStarts == .refused)
        _ = machine.complete(node, outcome: .cancelled, startedAt: 0, now: 3, effects: &effects)
        let report = RunReport(of: machine)
        #expect(report["sync"]?.outcome.kind == .cancelled)
        #expect(report["sync"]?.attempts == 1)
        // Its dependent needed its success: skipped, and the run is over.
        #expect(report["after"]?.outcome.kind == .skipped(dependency: "sync"))
        #expect(machine.outcome != nil)
    }

    @Test func aBodyThatSucceedsAfterTheRemovalIsReportedSucceeded() throws {
        var (machine, node) = try started()
        var effects = GraphEffects()
        let removal = machine.remove("sync", now: 1, effects: &effects)
        #expect(removal == .stillRunning)
        _ = machine.complete(node, outcome: .succeeded, startedAt: 0, now: 2, effects: &effects)
        #expect(RunReport(of: machine)["sync"]?.outcome.kind == .succeeded)
    }
}
