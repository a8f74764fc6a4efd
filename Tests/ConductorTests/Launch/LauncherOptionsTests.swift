import ConductorTestKit
import Testing

@testable import ConductorGraph
@testable import ConductorLaunch

/// A start-up task's ``TaskDependencies`` and ``TaskOptions``: the launcher honours each, as
/// the graph does, and checks them when the task is added.
@Suite struct LauncherOptionsTests {
    private struct Offline: Error {}

    // MARK: - Dependencies

    /// `c` (in order of addition) waits for `a`, the previous task added so, but not for `b`
    /// (independent) nor `d` (named); `d` runs once `b`, which it names, has succeeded.
    @Test func inOrderOfAdditionIndependentAndNamedDependencies() async throws {
        let holdA = Latch()
        let bRan = Latch()
        let dRan = Latch()
        let order = Recorder<String>()
        let launcher = Launcher()
        try launcher.add(
            ClosureStartupTask("a") {
                await holdA.wait()
                order.append("a")
            })
        try launcher.add(
            ClosureStartupTask("b", dependsOn: .independent) {
                order.append("b")
                bRan.open()
            })
        try launcher.add(
            ClosureStartupTask("d", dependsOn: ["b"]) {
                order.append("d")
                dRan.open()
            })
        try launcher.add(ClosureStartupTask("c") { order.append("c") })
        try launcher.start()
        await bRan.wait()
        await dRan.wait()
        #expect(!order.all.contains("c"), "c follows a, which is still running")
        holdA.open()
        let report = try await launcher.report()
        #expect(report.run.outcome == .completed)
        let all = order.all
        #expect(all.firstIndex(of: "b")! < all.firstIndex(of: "d")!)
        #expect(all.suffix(2) == ["a", "c"])
    }

    @Test func startupTaskDefaultsAreInOrderOfAdditionWithDefaultOptions() {
        struct Plain: StartupTask {
            let name = "plain"
            func run() async throws {}
        }
        #expect(Plain().dependencies == .inOrderOfAddition)
        #expect(Plain().options == TaskOptions())
        let closure = ClosureStartupTask("closure") {}
        #expect(closure.dependencies == .inOrderOfAddition)
        #expect(closure.options == TaskOptions())
        #expect(Launcher().dependencies == .inOrderOfAddition)
        #expect(Launcher().options == TaskOptions())
    }

    // MARK: - Options

    @Test func aTimeoutEndsAStartupTaskAsTimedOut() async throws {
        let clock = ManualClock()
        let never = Latch()
        let launcher = Launcher("app", clock: clock)
        try launcher.add(
            ClosureStartupTask("config", options: TaskOptions(timeout: .seconds(2))) { await never.wait() })
        try launcher.start()
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(2))
        let report = try await launcher.report().run
        #expect(report["config"].map { "\($0.outcome)" } == "timed out after 2.00 s")
        guard case .failed(let error) = report.outcome else {
            Issue.record("expected the required task's timeout to fail the launch, got \(report.outcome)")
            return
        }
        #expect(error.code == .timedOut)
        never.open()
    }

    @Test func thePriorityIsTheBodysBasePriority() async throws {
        let seen = Recorder<TaskPriority?>()
        let launcher = Launcher()
        try launcher.add(
            ClosureStartupTask("low", options: TaskOptions(priority: .low)) { seen.append(Task.basePriority) })
        try launcher.add(ClosureStartupTask("plain") { seen.append(Task.basePriority) })
        try await launcher.run()
        #expect(seen.all == [.low, .medium])
    }

    /// `b` runs although the optional `a` it needs failed; `c`, which needs `a` too, is skipped.
    @Test func whenDependencyFailsRunAnywayRunsTheTask() async throws {
        let ran = Recorder<String>()
        let launcher = Launcher()
        try launcher.add(ClosureStartupTask("a", options: TaskOptions(failure: .optional)) { throw Offline() })
        try launcher.add(
            ClosureStartupTask("b", dependsOn: ["a"], options: TaskOptions(whenDependencyFails: .runAnyway)) {
                ran.append("b")
            })
        try launcher.add(
            ClosureStartupTask("c", dependsOn: ["a"], options: TaskOptions(failure: .optional)) { ran.append("c") })
        try await launcher.run()
        let report = try await launcher.report().run
        #expect(ran.all == ["b"])
        #expect(report["b"]?.outcome.isSuccess == true)
        #expect(report["c"].map { "\($0.outcome)" }?.hasPrefix("skipped") == true)
    }

    /// An inner launcher with `failure: .optional` (the former `isRequired: false`): its failed
    /// launch is reported, and the outer one completes.
    @Test func anOptionalInnerLauncherDoesNotFailTheOuterOne() async throws {
        let inner = Launcher("inner", options: TaskOptions(failure: .optional))
        try inner.add(ClosureStartupTask("broken") { throw Offline() })
        let outer = Launcher("outer")
        try outer.add(inner)
        try await outer.run()
        let report = try await outer.report().run
        #expect(report.outcome == .completed)
        #expect(report["inner"]?.outcome.isSuccess == false)
    }

    @Test func addingRejectsANegativeTimeoutNamingTheTask() throws {
        let launcher = Launcher()
        let error = try #require(throws: LaunchError.self) {
            try launcher.add(ClosureStartupTask("config", options: TaskOptions(timeout: .seconds(-1))) {})
        }
        #expect(error.code == .negativeDuration)
        #expect(error.message == "task 'config' has a negative timeout (-1.00 s)")
        #expect(error.taskName == "config")
        try launcher.add(ClosureStartupTask("config", options: TaskOptions(timeout: .zero)) {})
    }

    // MARK: - Unknown names

    /// A name that does not exist is thrown by both products, naming it; an outcome of a set
    /// that exists is answered.
    @Test func anUnknownReadinessSetOrMilestoneIsThrownNamingIt() async throws {
        let launcher = Launcher()
        try launcher.add(ClosureStartupTask("config") { throw Offline() })
        try launcher.addReadiness("firstScreen", after: ["config"])
        let unknown = try await #require(throws: LaunchError.self) { try await launcher.ready("home") }
        #expect(unknown.code == .unknownReadiness)
        #expect(unknown.message == "no readiness set named 'home'")
        try launcher.start()
        guard case .failed(let ended) = try await launcher.ready("firstScreen") else {
            Issue.record("expected the launch's failure as an answer")
            return
        }
        #expect(ended.code == .launchEnded)

        var graph = TaskGraph()
        graph.add("config") { _ in }
        let run = try graph.start()
        let missing = try await #require(throws: GraphError.self) { try await run.reached("home") }
        #expect(missing.code == .unknownMilestone)
        #expect(missing.message == "no milestone named 'home'")
        _ = try await run.report()
    }
}
