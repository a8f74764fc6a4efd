import ConductorTestKit
import Testing

@testable import ConductorAssembly
@testable import ConductorCore
@testable import ConductorGate
@testable import ConductorGraph
@testable import ConductorHarmonizer
@testable import ConductorLaunch
@testable import ConductorReports

/// User code a launcher runs — a task's properties, its clock's `now` — runs outside the
/// launcher's lock: under it, code that is slow, takes a lock of its own or calls back into
/// the launcher would stall or deadlock every other caller.
@Suite struct LauncherLockTests {
    /// Records, for each call of user code, whether the launcher's lock was held at the time.
    /// Armed only around the call under test, while the launch (if any) is quiet, so that no
    /// other thread holds the lock for a reason of its own.
    private final class LockProbe: Sendable {
        private let state = Lock<(launcher: Launcher?, calls: [String])>((nil, []))

        func arm(_ launcher: Launcher) { state.withLock { $0.launcher = launcher } }

        /// Disarms the probe and returns what it recorded.
        func disarm() -> [String] {
            state.withLock { state in
                state.launcher = nil
                defer { state.calls = [] }
                return state.calls
            }
        }

        func check(_ call: String) {
            guard let launcher = state.withLock({ $0.launcher }) else { return }
            let locked = launcher.isLockedForTesting
            state.withLock { $0.calls.append("\(call)\(locked ? " under the lock" : "")") }
        }
    }

    /// A start-up task whose every property reports to the probe.
    private struct ProbingTask: StartupTask {
        let probe: LockProbe
        let taskName: String
        let needs: TaskDependencies

        var name: String {
            probe.check("\(taskName).name")
            return taskName
        }
        var dependencies: TaskDependencies {
            probe.check("\(taskName).dependencies")
            return needs
        }
        var runsOnMainActor: Bool {
            probe.check("\(taskName).runsOnMainActor")
            return false
        }
        var options: TaskOptions {
            probe.check("\(taskName).options")
            return TaskOptions()
        }

        func run() async throws {}
    }

    /// A manual clock whose `now` reports to the probe.
    private struct ProbingClock: Clock {
        let base: ManualClock
        let probe: LockProbe

        var now: ManualClock.Instant {
            probe.check("clock.now")
            return base.now
        }
        var minimumResolution: Duration { base.minimumResolution }

        func sleep(until deadline: ManualClock.Instant, tolerance: Duration?) async throws {
            try await base.sleep(until: deadline, tolerance: tolerance)
        }
    }

    @Test func addingATaskBeforeTheLaunchReadsItsPropertiesOutsideTheLock() throws {
        let probe = LockProbe()
        let launcher = Launcher()
        probe.arm(launcher)
        try launcher.add(ProbingTask(probe: probe, taskName: "a", needs: .inOrderOfAddition))
        try launcher.add(ProbingTask(probe: probe, taskName: "b", needs: ["a"]))
        let calls = probe.disarm()
        #expect(!calls.isEmpty)
        #expect(calls.allSatisfy { !$0.hasSuffix("under the lock") }, "\(calls)")
        // Read once each, however often the launcher needs them.
        #expect(calls.filter { $0 == "a.name" }.count == 1, "\(calls)")
    }

    @Test func startingAndAddingDuringTheLaunchAskTheClockOutsideTheLock() async throws {
        let probe = LockProbe()
        let clock = ProbingClock(base: ManualClock(), probe: probe)
        let launcher = Launcher(clock: clock)
        let hold = Latch()
        let holding = Latch()
        try launcher.add(
            TestStartupTask("held") {
                holding.open()
                await hold.wait()
            })

        probe.arm(launcher)
        try launcher.start()
        let startCalls = probe.disarm()
        #expect(startCalls.contains("clock.now"), "\(startCalls)")
        #expect(startCalls.allSatisfy { !$0.hasSuffix("under the lock") }, "\(startCalls)")

        // The only task is running and waits: nothing else touches the launcher now.
        await holding.wait()
        probe.arm(launcher)
        try launcher.add(ProbingTask(probe: probe, taskName: "late", needs: ["held"]))
        let addCalls = probe.disarm()
        #expect(addCalls.contains("clock.now"), "\(addCalls)")
        #expect(addCalls.contains("late.name"), "\(addCalls)")
        #expect(addCalls.allSatisfy { !$0.hasSuffix("under the lock") }, "\(addCalls)")

        hold.open()
        let report = try await launcher.report()
        #expect(report.outcome.description == "completed")
        #expect(report["late"]?.outcome.isSuccess == true)
    }

    /// A property that calls back into the launcher: under the lock this would deadlock.
    @Test func aTaskPropertyMayCallBackIntoTheLauncher() throws {
        struct Reentrant: StartupTask {
            // Weak: the launcher keeps its tasks, and a task keeping it would be a cycle that
            // outlives the test (LeakSanitizer reported it).
            weak let launcher: Launcher?
            var name: String {
                _ = launcher?.remove("nothing by this name")
                return "reentrant"
            }
            func run() async throws {}
        }
        let launcher = Launcher()
        try launcher.add(Reentrant(launcher: launcher))
        let error = #expect(throws: LaunchError.self) { try launcher.add(TestStartupTask("reentrant")) }
        #expect(error?.code == .duplicateName)
    }

    /// Additions during the launch reach the graph outside the launcher's lock, several
    /// callers at once: each caller's chained tasks still run in the order it added them, one
    /// at a time (the chain), every task runs exactly once, and no addition fails.
    @Test func concurrentChainedAdditionsDuringTheLaunchKeepTheChain() async throws {
        let ran = Recorder<String>()
        final class Running: Sendable {
            let count = Lock(0)
        }
        let running = Running()
        let hold = Latch()
        let launcher = Launcher()
        try launcher.add(TestStartupTask("held") { await hold.wait() })
        try launcher.start()
        let callers = 4
        let perCaller = 25
        try await withThrowingTaskGroup(of: Void.self) { group in
            for caller in 0..<callers {
                group.addTask {
                    for index in 0..<perCaller {
                        try launcher.add(
                            TestStartupTask("c\(caller)-\(index)") {
                                let overlapping = running.count.withLock { count in
                                    count += 1
                                    return count > 1
                                }
                                #expect(!overlapping)
                                ran.append("c\(caller)-\(index)")
                                running.count.withLock { $0 -= 1 }
                            })
                    }
                }
            }
            try await group.waitForAll()
        }
        hold.open()
        let report = try await launcher.report()
        #expect(report.outcome == .completed)
        let order = ran.all
        #expect(order.count == callers * perCaller)
        #expect(Set(order).count == order.count)
        for caller in 0..<callers {
            let own = order.filter { $0.hasPrefix("c\(caller)-") }
            #expect(own == (0..<perCaller).map { "c\(caller)-\($0)" })
        }
    }
}
