import ConductorTestKit
import Testing

@testable import ConductorAssembly
@testable import ConductorCore
@testable import ConductorGate
@testable import ConductorGraph
@testable import ConductorHarmonizer
@testable import ConductorLaunch
@testable import ConductorReports

/// `RunOutcome.completed` means every required task succeeded, removed ones excepted; a failed
/// run's critical path ends at the required task that failed it.
@Suite struct RequiredOutcomeTests {
    private struct Boom: Error {}

    // MARK: - A required task that did not succeed

    /// Before, the run completed with a required task skipped.
    @Test func aRequiredTaskSkippedForAnOptionalFailureFailsTheRun() async throws {
        var graph = TaskGraph()
        graph.add("comments", options: TaskOptions(failure: .optional)) { _ in throw Boom() }
        graph.add("commentCount", dependsOn: ["comments"]) { _ in }
        let report = try await graph.run()
        #expect(!report.isSuccess)
        guard case .failed(let error) = report.outcome else {
            Issue.record("the run ended \(report.outcome)")
            return
        }
        #expect(error.code == .taskFailed)
        #expect(error.taskID == "commentCount")
        #expect(error.message == "required task 'commentCount' was skipped: 'comments' did not succeed")
        #expect(report["commentCount"]?.outcome.kind == .skipped(dependency: "comments"))
    }

    /// The skip stops the run like a failure: a task still waiting ends cancelled.
    @Test func aRequiredSkipStopsTheRun() async throws {
        let ran = Recorder<String>()
        var graph = TaskGraph()
        graph.add("comments", options: TaskOptions(failure: .optional)) { _ in throw Boom() }
        graph.add("commentCount", dependsOn: ["comments"]) { _ in }
        graph.add(
            "later", dependsOn: ["comments"], options: TaskOptions(failure: .optional, whenDependencyFails: .runAnyway)
        ) { _ in
            ran.append("later")
        }
        let report = try await graph.run(concurrencyLimit: 1)
        #expect(!report.isSuccess)
        // Released by the same end as the skip, after it: the stop came first.
        #expect(report["later"]?.outcome.kind == .cancelled)
        #expect(ran.all.isEmpty)
    }

    /// A required body that throws `CancellationError` while the run goes on (no removal, no
    /// stop) did not succeed. Before, the run completed.
    @Test func aRequiredTaskWhoseBodyCancelsItselfFailsTheRun() async throws {
        var graph = TaskGraph()
        graph.add("config") { _ in throw CancellationError() }
        let report = try await graph.run()
        #expect(!report.isSuccess)
        guard case .failed(let error) = report.outcome else {
            Issue.record("the run ended \(report.outcome)")
            return
        }
        #expect(error.taskID == "config")
        #expect(report["config"]?.outcome.kind == .cancelled)
    }

    @Test func anOptionalTaskSkippedOrCancellingItselfLeavesTheRunCompleted() async throws {
        var graph = TaskGraph()
        graph.add("comments", options: TaskOptions(failure: .optional)) { _ in throw Boom() }
        graph.add("commentCount", dependsOn: ["comments"], options: TaskOptions(failure: .optional)) { _ in }
        graph.add("ads", options: TaskOptions(failure: .optional)) { _ in throw CancellationError() }
        let report = try await graph.run()
        #expect(report.outcome == .completed)
    }

    // MARK: - Removal is no failure

    /// Removing a required task is deliberate: the run completes, and so it does when required
    /// tasks that needed it (directly or through another skip) are skipped.
    @Test func removingARequiredTaskLeavesTheRunCompleted() async throws {
        let gate = Latch()
        var graph = TaskGraph()
        graph.add("first") { _ in await gate.wait() }
        graph.add("removed", dependsOn: ["first"]) { _ in }
        graph.add("dependent", dependsOn: ["removed"]) { _ in }
        graph.add("grandchild", dependsOn: ["dependent"]) { _ in }
        let run = try graph.start()
        #expect(try run.remove("removed") == .prevented)
        gate.open()
        let report = try await run.report()
        #expect(report.outcome == .completed)
        #expect(report["removed"]?.outcome.kind == .cancelled)
        #expect(report["dependent"]?.outcome.kind == .skipped(dependency: "removed"))
        #expect(report["grandchild"]?.outcome.kind == .skipped(dependency: "dependent"))
    }

    /// A required task skipped because an optional task failed still fails the run when a
    /// removal happened elsewhere.
    @Test func aRemovalElsewhereDoesNotExcuseAFailureSkip() async throws {
        let gate = Latch()
        var graph = TaskGraph()
        graph.add("first") { _ in await gate.wait() }
        graph.add("removed", dependsOn: ["first"]) { _ in }
        graph.add("comments", dependsOn: ["first"], options: TaskOptions(failure: .optional)) { _ in throw Boom() }
        graph.add("commentCount", dependsOn: ["comments"]) { _ in }
        let run = try graph.start()
        #expect(try run.remove("removed") == .prevented)
        gate.open()
        let report = try await run.report()
        guard case .failed(let error) = report.outcome else {
            Issue.record("the run ended \(report.outcome)")
            return
        }
        #expect(error.taskID == "commentCount")
    }

    /// A removal excuses only a task it ends — and a removal while a body runs on a worker
    /// (`stillRunning`) ends it: the body is cancelled, and whatever it then does (here it
    /// fails), the task ends cancelled and removed, so the required task skipped for it is
    /// excused and the run completes. (Before removals cancelled such bodies, the task ended
    /// failed and the skip failed the run.)
    @Test func aStillRunningRemovalEndsTheTaskEvenIfItsBodyFails() async throws {
        let began = Latch()
        let release = Latch()
        var graph = TaskGraph()
        graph.add("a", options: TaskOptions(failure: .optional)) { _ in
            began.open()
            await release.wait()
            throw Boom()
        }
        graph.add("b", dependsOn: ["a"]) { _ in }
        let run = try graph.start()
        await began.wait()
        #expect(try run.remove("a") == .stillRunning)
        release.open()
        let report = try await run.report()
        #expect(report["a"]?.outcome.kind == .cancelled)
        #expect(report["a"]?.wasRemoved == true)
        #expect(report["b"]?.outcome.kind == .skipped(dependency: "a"))
        #expect(report.outcome == .completed)
    }

    /// A removal that finds the task ended changes nothing: a required task whose body threw
    /// `CancellationError` (its attempt settled, its worker not yet told) still fails the run.
    /// The state machine alone, so the removal lands in exactly that window. Before, the
    /// removal excused the task's own cancel and the run completed.
    @Test func aRemovalThatFindsTheTaskEndedDoesNotExcuseItsOwnCancel() throws {
        var graph = TaskGraph()
        // On the main actor: its body runs in a task of its own (a timeout alone runs on the
        // worker); the machine never calls it.
        graph.addOnMainActor("config", options: TaskOptions(timeout: .seconds(1))) { _ in }
        var (machine, node) = try GraphStateMachine.handingOutTheFirstTask(of: graph)
        _ = machine.attempts.settle(node, number: 1, with: .cancelled)
        var effects = GraphEffects()
        #expect(machine.remove("config", now: 1, effects: &effects) == .alreadyEnded)
        _ = machine.complete(node, outcome: .cancelled, startedAt: 0, now: 2, effects: &effects)
        guard case .failed(let error) = machine.outcome else {
            Issue.record("the run ended \(String(describing: machine.outcome))")
            return
        }
        #expect(error.code == .taskFailed)
        #expect(error.taskID == "config")
    }

    /// A required task removed while its body runs on a worker, whose failed attempt the
    /// removal then keeps from being retried, was ended by the removal: excused, and so is the
    /// required task skipped for it.
    @Test func aRemovalThatPreventsTheRetryOfARunningBodyIsExcused() throws {
        var graph = TaskGraph()
        graph.add("sync", options: TaskOptions(retry: .attempts(3, backoff: .zero))) { _ in }
        graph.add("after", dependsOn: ["sync"]) { _ in }
        var (machine, node) = try GraphStateMachine.handingOutTheFirstTask(of: graph)
        var effects = GraphEffects()
        #expect(machine.remove("sync", now: 1, effects: &effects) == .stillRunning)
        let retries = machine.attemptFailed(node, attempt: 1, error: Boom(), delay: .zero, now: 2, effects: &effects)
        #expect(!retries)
        _ = machine.complete(node, outcome: .cancelled, startedAt: 0, now: 3, effects: &effects)
        #expect(RunReport(of: machine)["after"]?.outcome.kind == .skipped(dependency: "sync"))
        #expect(machine.outcome == .completed)
    }

    // MARK: - The launcher

    /// Before, the launch completed and `run()` returned.
    @Test func aLaunchWithARequiredTaskSkippedFails() async throws {
        let launcher = Launcher()
        try launcher.add(TestStartupTask("version", options: TaskOptions(failure: .optional)) { throw Boom() })
        try launcher.add(TestStartupTask("promo", dependencies: ["version"]))
        await #expect {
            try await launcher.run()
        } throws: { error in
            (error as? LaunchError)?.code == .taskFailed && (error as? LaunchError)?.taskName == "promo"
        }
        #expect(try await launcher.report().isSuccess == false)
    }

    @Test func aLaunchWithARequiredTaskRemovedCompletes() async throws {
        let gate = Latch()
        let ran = Recorder<String>()
        let launcher = Launcher()
        try launcher.add(TestStartupTask("first") { await gate.wait() })
        try launcher.add(TestStartupTask("middle") { ran.append("middle") })
        try launcher.add(TestStartupTask("needsMiddle", dependencies: ["middle"]) { ran.append("needsMiddle") })
        try launcher.add(TestStartupTask("last") { ran.append("last") })
        try launcher.start()
        #expect(launcher.remove("middle") == .prevented)
        gate.open()
        try await launcher.run()
        #expect(ran.all == ["last"])
        #expect(try await launcher.report().outcome == .completed)
    }

    // MARK: - The critical path of a failed run

    /// An optional task that ends after the failure (its body ignores cancellation) is not
    /// the end of the critical path. Before, the path was `["slow"]`.
    @Test func aFailedRunsCriticalPathEndsAtTheFailingTask() async throws {
        let slowStarted = Latch()
        let release = Latch()
        var graph = TaskGraph()
        graph.add("root") { _ in }
        graph.add("fails", dependsOn: ["root"]) { _ in
            await slowStarted.wait()
            throw Boom()
        }
        graph.add("slow", options: TaskOptions(failure: .optional)) { _ in
            slowStarted.open()
            await release.wait()
        }
        let run = try graph.start()
        let recorder = EventRecorder(run.events)
        _ = await recorder.first { if case .taskFailed("fails", _, _) = $0 { true } else { false } }
        release.open()
        let report = try await run.report()
        #expect(report["slow"]!.endedAt >= report["fails"]!.endedAt)
        #expect(report.criticalPath == ["root", "fails"])
    }

    /// The same for a launch, whose abandoned optional task ends after the failure. Before,
    /// the path was `["slow"]`.
    @Test func aFailedLaunchsCriticalPathEndsAtTheFailingTask() async throws {
        let slowStarted = Latch()
        let release = Latch()
        let launcher = Launcher()
        try launcher.add(TestStartupTask("root"))
        try launcher.add(
            TestStartupTask("fails", dependencies: ["root"]) {
                await slowStarted.wait()
                throw Boom()
            })
        try launcher.add(
            TestStartupTask("slow", dependencies: [], options: TaskOptions(failure: .optional)) {
                slowStarted.open()
                await release.wait()
            })
        try launcher.start()
        let report = try await launcher.report()
        release.open()
        #expect(report["slow"]!.endedAt >= report["fails"]!.endedAt)
        #expect(report.criticalPath == ["root", "fails"])
    }
}
