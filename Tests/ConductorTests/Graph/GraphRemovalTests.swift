import Testing

@testable import ConductorAssembly
@testable import ConductorCore
@testable import ConductorGate
@testable import ConductorGraph
@testable import ConductorHarmonizer
@testable import ConductorLaunch
@testable import ConductorReports

/// Removing a task with retries whose body runs on one of the run's workers (no timeout): its
/// worker is cancelled, no attempt follows the body, and the task ends cancelled and removed
/// whatever the body does. The state machine alone, so the removal lands exactly while the body
/// runs.
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
        #expect(report["sync"]?.wasRemoved == true)
        #expect(report["after"]?.wasRemoved == false)
        // Its dependent needed its success: skipped, and the run is over.
        #expect(report["after"]?.outcome.kind == .skipped(dependency: "sync"))
        #expect(machine.outcome != nil)
    }

    /// Before, a body that returned after the removal was reported succeeded: the removal
    /// cancelled nothing. Now it cancels the body, and the task ends cancelled and removed.
    @Test func aBodyThatSucceedsAfterTheRemovalIsReportedCancelledAndRemoved() throws {
        var (machine, node) = try started()
        var effects = GraphEffects()
        let removal = machine.remove("sync", now: 1, effects: &effects)
        #expect(removal == .stillRunning)
        _ = machine.complete(node, outcome: .succeeded, startedAt: 0, now: 2, effects: &effects)
        let report = RunReport(of: machine)
        #expect(report["sync"]?.outcome.kind == .cancelled)
        #expect(report["sync"]?.wasRemoved == true)
        #expect(report["after"]?.outcome.kind == .skipped(dependency: "sync"))
        #expect(machine.outcome == .completed)
    }

    /// `wasRemoved` is true only for the task a removal ended: not for its dependent, skipped
    /// for lack of it, nor for a task that ended by itself.
    @Test func onlyTheTaskARemovalEndedIsReportedRemoved() throws {
        var (machine, node) = try started()
        var effects = GraphEffects()
        #expect(machine.remove("after", now: 1, effects: &effects) == .prevented)
        _ = machine.complete(node, outcome: .succeeded, startedAt: 0, now: 2, effects: &effects)
        let report = RunReport(of: machine)
        #expect(report["after"]?.wasRemoved == true)
        #expect(report["after"]?.outcome.kind == .cancelled)
        #expect(report["sync"]?.wasRemoved == false)
    }
}
