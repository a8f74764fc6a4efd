import ConductorTestKit
import Testing

@testable import ConductorAssembly
@testable import ConductorCore
@testable import ConductorGate
@testable import ConductorGraph
@testable import ConductorHarmonizer
@testable import ConductorLaunch
@testable import ConductorReports

@Suite struct LauncherTests {
    private struct Offline: Error, CustomStringConvertible {
        var description: String { "offline" }
    }

    // MARK: - The seed

    /// The seed's `AppStartTaskManager`: five managers added in order run one after another,
    /// each starting only once the one before it has ended.
    @Test func tasksAddedInOrderRunInThatOrder() async throws {
        let order = Recorder<String>()
        let launcher = Launcher()
        for index in 1...5 {
            try launcher.add(TestStartupTask("Manager\(index)") { order.append("Manager\(index)") })
        }
        try await launcher.run()
        #expect(order.all == ["Manager1", "Manager2", "Manager3", "Manager4", "Manager5"])
        var lastEnd = -1
        var position = 0
        for await event in launcher.events {
            position += 1
            switch event {
            case .taskStarted: #expect(position > lastEnd)
            case .taskSucceeded: lastEnd = position
            default: break
            }
        }
        let report = try await launcher.report()
        #expect(report.tasks.map(\.id) == ["Manager1", "Manager2", "Manager3", "Manager4", "Manager5"])
        #expect(report.criticalPath == ["Manager1", "Manager2", "Manager3", "Manager4", "Manager5"])
    }

    @Test func theObserverHearsStartsCompletionsAndAFailureWithItsError() async throws {
        let launcher = Launcher()
        let observer = RecordingObserver()
        launcher.observe(on: .mainActor, observer)
        try launcher.add(TestStartupTask("channel"))
        try launcher.add(TestStartupTask("version", options: TaskOptions(failure: .optional)) { throw Offline() })
        try launcher.add(TestStartupTask("config"))
        try launcher.start()
        await observer.finished.wait()
        #expect(
            observer.heard.all == [
                "started channel", "completed channel", "started version", "failed version: offline",
                "started config", "completed config", "finished completed",
            ])
    }

    @Test func aRequiredFailureEndsTheLaunchWithAnErrorNamingTheTask() async throws {
        let launcher = Launcher()
        try launcher.add(TestStartupTask("config") { throw Offline() })
        try launcher.add(TestStartupTask("home"))
        let error = await #expect(throws: LaunchError.self) { try await launcher.run() }
        #expect(error?.code == .taskFailed)
        #expect(error?.taskName == "config")
        #expect(error?.message == "required task 'config' failed: offline")
        let report = try await launcher.report()
        #expect("\(report["home"]!.outcome)" == "cancelled")
    }

    @Test func boundedRetryOnTheLaunchersClock() async throws {
        let clock = ManualClock()
        let attempts = Recorder<Int>()
        let launcher = Launcher(clock: clock)
        try launcher.add(
            TestStartupTask("config", options: TaskOptions(retry: .attempts(2, backoff: .seconds(1)))) {
                attempts.append(attempts.all.count + 1)
                throw Offline()
            })
        try launcher.start()
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(1))
        let report = try await launcher.report()
        #expect(attempts.all == [1, 2])
        #expect(report["config"]?.attempts == 2)
        #expect(!report.isSuccess)
    }

    @Test func dependenciesRunInParallelAndMainActorTasksRunOnTheMainActor() async throws {
        let ran = Recorder<String>()
        let bothStarted = Latch()
        let count = Recorder<Int>()
        let launcher = Launcher()
        // a and b wait for each other: they can only finish if they run at the same time.
        for name in ["a", "b"] {
            try launcher.add(
                TestStartupTask(name, dependencies: []) {
                    count.append(1)
                    if count.all.count == 2 { bothStarted.open() }
                    await bothStarted.wait()
                })
        }
        try launcher.add(MainActorStartupTask(name: "home", ran: ran))
        try await launcher.run()
        let report = try await launcher.report()
        #expect(ran.all == ["home"])
        #expect(report["home"]?.placement == "main actor")
        #expect(report.isSuccess)
    }

    @Test func addingValidatesNamesAndDependencies() throws {
        let launcher = Launcher()
        try launcher.add(TestStartupTask("a"))
        #expect(throws: LaunchError.duplicateName("a")) { try launcher.add(TestStartupTask("a")) }
        #expect(throws: LaunchError.emptyName()) { try launcher.add(TestStartupTask("")) }
        #expect(throws: LaunchError.unknownDependency("z", of: "b")) {
            try launcher.add(TestStartupTask("b", dependencies: ["z"]))
        }
    }

    /// A task that names itself can never be added "first": it is a cycle, as a graph says.
    @Test func aTaskOrReadinessSetThatDependsOnItselfIsACycle() throws {
        let launcher = Launcher()
        let task = try #require(throws: LaunchError.self) {
            try launcher.add(TestStartupTask("a", dependencies: ["a"]))
        }
        #expect(task.code == .cycle)
        #expect(task.message == "dependencies form a loop: a → a")
        #expect(task.taskName == "a")
        let readiness = try #require(throws: LaunchError.self) {
            try launcher.addReadiness("firstScreen", after: ["firstScreen"])
        }
        #expect(readiness.code == .cycle)
        #expect(readiness.message == "dependencies form a loop: firstScreen → firstScreen")
        // Neither was kept.
        try launcher.add(TestStartupTask("a", dependencies: []))
        try launcher.addReadiness("firstScreen", after: ["a"])
    }

    /// A launcher needs dependencies added before their dependents; the message says so.
    @Test func aDependencyNotAddedYetIsToBeAddedFirst() throws {
        let launcher = Launcher()
        let error = try #require(throws: LaunchError.self) {
            try launcher.add(TestStartupTask("sku", dependencies: ["basicInfo"]))
        }
        #expect(error.code == .unknownDependency)
        #expect(
            error.message
                == "'sku' depends on 'basicInfo', which has not been added: add 'basicInfo' before 'sku'"
                + " (dependencies are added first, so tasks cannot depend on each other in a cycle)")
        try launcher.add(TestStartupTask("basicInfo"))
        try launcher.add(TestStartupTask("sku", dependencies: ["basicInfo"]))
    }

    /// Two tasks that depend on each other: whichever is added first names the other as not
    /// added yet, and the message says that order matters and rules out a cycle, instead of
    /// advice to add the other first that the other's own dependency defeats.
    @Test func tasksThatDependOnEachOtherAreToldOrderRulesOutACycle() throws {
        let launcher = Launcher()
        let first = try #require(throws: LaunchError.self) {
            try launcher.add(TestStartupTask("a", dependencies: ["b"]))
        }
        let second = try #require(throws: LaunchError.self) {
            try launcher.add(TestStartupTask("b", dependencies: ["a"]))
        }
        for error in [first, second] {
            #expect(error.code == .unknownDependency)
            #expect(error.message.hasSuffix("so tasks cannot depend on each other in a cycle)"))
        }
        #expect(first.message.hasPrefix("'a' depends on 'b', which has not been added: add 'b' before 'a'"))
        #expect(second.message.hasPrefix("'b' depends on 'a', which has not been added: add 'a' before 'b'"))
        // Added and then removed, the first one's name is free again; bringing it back
        // depending on its dependent is a cycle, named when the launch starts.
        try launcher.add(TestStartupTask("a", dependencies: []))
        try launcher.add(TestStartupTask("b", dependencies: ["a"]))
        launcher.remove("a")
        try launcher.add(TestStartupTask("a", dependencies: ["b"]))
        let cycle = try #require(throws: LaunchError.self) { try launcher.start() }
        #expect(cycle.code == .cycle)
        #expect(cycle.message == "dependencies form a loop: b → a → b")
    }

    /// A task added in order of addition (the default) runs after the previous task added so,
    /// not after the task added just before it: "b" (with dependencies) is not waited for by
    /// "c", which starts once "a" has ended while "b" still runs.
    @Test func aTaskWithoutDependenciesFollowsThePreviousOneWithoutDependencies() async throws {
        let bGate = Latch()
        let cRan = Latch()
        let launcher = Launcher()
        try launcher.add(TestStartupTask("a"))
        try launcher.add(TestStartupTask("b", dependencies: []) { await bGate.wait() })
        try launcher.add(TestStartupTask("c") { cRan.open() })
        try launcher.start()
        await cRan.wait()
        bGate.open()
        let report = try await launcher.report()
        let aEnded = try #require(report["a"]?.endedAt)
        let bEnded = try #require(report["b"]?.endedAt)
        let cStarted = try #require(report["c"]?.startedAt)
        #expect(cStarted >= aEnded)
        #expect(cStarted < bEnded)
    }

    @Test func removeAllBeforeTheLaunchFreesTheNames() async throws {
        let order = Recorder<String>()
        let launcher = Launcher()
        try launcher.add(TestStartupTask("stale") { order.append("stale") })
        launcher.removeAll()
        try launcher.add(TestStartupTask("stale") { order.append("fresh") })
        try await launcher.run()
        #expect(order.all == ["fresh"])
    }

    // MARK: - Removal during a launch

    /// Removing the middle task of a chain keeps the order: the next one still waits for the
    /// one before the removed task.
    @Test func removingAPendingTaskKeepsTheOrder() async throws {
        let gate = Latch()
        let order = Recorder<String>()
        let launcher = Launcher()
        try launcher.add(
            TestStartupTask("first") {
                await gate.wait()
                order.append("first")
            })
        try launcher.add(TestStartupTask("middle") { order.append("middle") })
        try launcher.add(TestStartupTask("last") { order.append("last") })
        try launcher.start()
        await launcher.event { if case .taskStarted("first", _, _) = $0 { true } else { false } }
        #expect(launcher.remove("middle") == .prevented)
        gate.open()
        let report = try await launcher.report()
        #expect(order.all == ["first", "last"])
        #expect(report["middle"]?.startedAt == nil)
        #expect(launcher.remove("middle") == .alreadyEnded)
    }

    @Test func removingARunningTaskCancelsItAtOnce() async throws {
        let never = Latch()
        let launcher = Launcher()
        try launcher.add(TestStartupTask("stuck") { await never.wait() })
        try launcher.add(TestStartupTask("next"))
        try launcher.start()
        await launcher.event { if case .taskStarted("stuck", _, _) = $0 { true } else { false } }
        #expect(launcher.remove("stuck") == .abandoned)
        let report = try await launcher.report()
        #expect("\(report["stuck"]!.outcome)" == "cancelled")
        #expect(report["next"]?.outcome.isSuccess == true)
        never.open()
    }

    /// Many tasks add, remove and remove all while a launch runs. Every task added ends
    /// exactly once, and a task whose removal came before its start never runs its body.
    /// `removeAll` also removes the keeper, which ends the launch: later additions are
    /// refused with `launchFinished`, never lost.
    @Test(arguments: StressConfiguration.seeds(default: 20, base: 0x1A0C))
    func addRemoveAndRemoveAllRaceWithALaunch(seed: UInt64) async throws {
        let keeper = Latch()
        let entered = Recorder<String>()
        let launcher = Launcher()
        try launcher.add(TestStartupTask("keeper", dependencies: []) { await keeper.wait() })
        try launcher.start()
        let added = Recorder<String>()
        let refused = Recorder<String>()
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    var random = SeededGenerator(seed: seed &* 31 &+ UInt64(worker))
                    for index in 0..<40 {
                        let name = "w\(worker)-\(index)"
                        let task = TestStartupTask(
                            name, dependencies: Bool.random(using: &random) ? .independent : .inOrderOfAddition
                        ) {
                            entered.append(name)
                            await Task.yield()
                        }
                        do throws(LaunchError) {
                            try launcher.add(task)
                            added.append(name)
                        } catch {
                            #expect(error.code == .launchFinished)
                            refused.append(name)
                        }
                        switch Int.random(in: 0..<200, using: &random) {
                        case 0..<80: launcher.remove(name)
                        case 80: launcher.removeAll()
                        default: break
                        }
                    }
                }
            }
        }
        keeper.open()
        let report = try await launcher.report()
        var started: Set<String> = []
        var ends: [String: Int] = [:]
        for await event in launcher.events {
            switch event {
            case .taskStarted(let id, _, _): started.insert(id)
            case .taskSucceeded(let id, _), .taskFailed(let id, _, _), .taskCancelled(let id, _),
                .taskSkipped(let id, _, _), .taskTimedOut(let id, _):
                ends[id, default: 0] += 1
            default: break
            }
        }
        #expect(added.all.count + refused.all.count == 8 * 40)
        #expect(report.tasks.count == added.all.count + 1)
        for name in added.all { #expect(ends[name] == 1, "\(name) ended \(ends[name] ?? 0) times") }
        for name in entered.all { #expect(started.contains(name), "\(name) ran without starting") }
    }

    // MARK: - Readiness

    @Test func readyWaitsForJustItsSetAndTimesOutOnTheClock() async throws {
        let clock = ManualClock()
        let slowGate = Latch()
        let launcher = Launcher(clock: clock)
        try launcher.add(TestStartupTask("config", dependencies: []))
        try launcher.add(TestStartupTask("slow", dependencies: []) { await slowGate.wait() })
        try launcher.addReadiness("firstScreen", after: ["config"])
        try launcher.addReadiness("everything", after: ["config", "slow"])
        try launcher.start()
        #expect(try await launcher.ready("firstScreen", timeout: .seconds(2)).isReady)
        async let late = try launcher.ready("everything", timeout: .seconds(2))
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(2))
        #expect(try await late == .timedOut(after: .seconds(2)))
        slowGate.open()
        #expect(try await launcher.ready("everything").isReady)
        await #expect(throws: LaunchError.unknownReadiness("nothing")) { try await launcher.ready("nothing") }
    }

    /// Every `ready(_:timeout:)` of a launcher waits on its one timer: three waits, one
    /// sleeper, each timing out with its own timeout; a set already ready is answered at
    /// once, even with a zero timeout or to a cancelled caller.
    @Test func readyTimeoutsShareOneTimer() async throws {
        let clock = ManualClock()
        let slowGate = Latch()
        let launcher = Launcher(clock: clock)
        try launcher.add(TestStartupTask("config", dependencies: []))
        try launcher.add(TestStartupTask("slow", dependencies: []) { await slowGate.wait() })
        try launcher.addReadiness("firstScreen", after: ["config"])
        try launcher.addReadiness("everything", after: ["config", "slow"])
        try launcher.start()
        #expect(try await launcher.ready("firstScreen").isReady)
        #expect(try await launcher.ready("firstScreen", timeout: .zero).isReady)
        let cancelled = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await launcher.ready("firstScreen", timeout: .seconds(1))
        }
        #expect(try await cancelled.value.isReady)

        let answers = Recorder<LaunchReadiness>()
        for seconds in 1...3 {
            Task {
                answers.append(try await launcher.ready("everything", timeout: .seconds(seconds)))
                clock.stateChanged()
            }
        }
        var mostSleepers = 0
        let done = try await clock.advance(by: .seconds(1)) {
            mostSleepers = max(mostSleepers, clock.sleeperCount)
            return answers.all.count == 3
        }
        #expect(done)
        #expect(mostSleepers == 1, "one timer task, not one per wait")
        #expect(Set(answers.all).count == 3, "each with its own timeout")
        #expect(answers.all.allSatisfy { if case .timedOut = $0 { true } else { false } })
        slowGate.open()
        #expect(clock.sleeperCount == 0, "the last wait's deadline was cancelled")
    }

    /// A launcher that is never started: `ready` at its deadline says so, rather than that it
    /// timed out (a launch that started and is slow still times out: see
    /// `readyWaitsForJustItsSetAndTimesOutOnTheClock`).
    @Test func readyOfALauncherNeverStartedSaysSoAtItsDeadline() async throws {
        let clock = ManualClock()
        let launcher = Launcher("app", clock: clock)
        try launcher.add(TestStartupTask("config"))
        try launcher.addReadiness("firstScreen", after: ["config"])
        async let waiting = try launcher.ready("firstScreen", timeout: .seconds(2))
        await clock.sleepers(atLeast: 1, for: .launchReadyTimeout)
        clock.advance(by: .seconds(2))
        let answer = try await waiting
        guard case .failed(let error) = answer else {
            Issue.record("expected notStarted, got \(answer)")
            return
        }
        #expect(error.code == .notStarted)
        #expect(
            error.message
                == "the wait for 'firstScreen' timed out after 2.00 s: launcher 'app' has not been started")
        #expect(
            try await launcher.ready("firstScreen", timeout: .zero)
                == .failed(.notStarted("app", waitingFor: "firstScreen", after: .zero)),
            "a zero timeout before the start says so too")
        try launcher.start()
        #expect(try await launcher.ready("firstScreen").isReady)
    }

    @Test func readyBeforeTheLaunchStartsWaitsForIt() async throws {
        let launcher = Launcher()
        try launcher.add(TestStartupTask("config"))
        try launcher.addReadiness("firstScreen", after: ["config"])
        async let ready = try launcher.ready("firstScreen")
        try launcher.start()
        #expect(try await ready.isReady)
    }

    @Test func readyFailsNamingTheCulpritWhenTheLaunchFails() async throws {
        let launcher = Launcher()
        try launcher.add(TestStartupTask("config") { throw Offline() })
        try launcher.addReadiness("firstScreen", after: ["config"])
        try launcher.start()
        guard case .failed(let error) = try await launcher.ready("firstScreen") else {
            Issue.record("expected failure")
            return
        }
        #expect(error.code == .launchEnded)
        #expect(error.message.contains("'config'"))
    }

    // MARK: - Cancelling before the launch

    /// A cancel before `start()` is remembered: the launch ends as cancelled as soon as it
    /// starts, no task body runs (not even one added after the cancel), and a readiness
    /// waiter hears that the launch ended.
    @Test func aCancelBeforeStartEndsTheLaunchAsCancelledWithoutRunningATask() async throws {
        let ran = Recorder<String>()
        let launcher = Launcher()
        try launcher.add(TestStartupTask("config") { ran.append("config") })
        try launcher.addReadiness("firstScreen", after: ["config"])
        async let ready = try launcher.ready("firstScreen")
        launcher.cancel()
        try launcher.add(TestStartupTask("home") { ran.append("home") })
        try launcher.start()
        let report = try await launcher.report()
        #expect(report.outcome == .cancelled)
        #expect(report["config"].map { "\($0.outcome)" } == "cancelled")
        #expect(report["home"].map { "\($0.outcome)" } == "cancelled")
        guard case .failed(let error) = try await ready else {
            Issue.record("expected the readiness wait to fail")
            return
        }
        #expect(error.code == .launchEnded)
        #expect(ran.all.isEmpty)
    }

    @Test func runAfterACancelThrowsCancelledWithoutRunningATask() async throws {
        let ran = Recorder<String>()
        let launcher = Launcher()
        try launcher.add(TestStartupTask("config") { ran.append("config") })
        launcher.cancel()
        let error = await #expect(throws: LaunchError.self) { try await launcher.run() }
        #expect(error?.code == .cancelled)
        #expect(ran.all.isEmpty)
    }

    /// `cancel()` and `start()` from two tasks at once, issued in an order drawn from a fixed
    /// seed: whichever lands first, the cancel is never lost. The task's body holds on until
    /// both calls have returned, so a launch that missed the cancel would complete.
    @Test func aCancelRacingStartIsNeverLost() async throws {
        var random = SplitMix64(seed: 0x0C0F_FEE0)
        for round in 0..<200 {
            let bothCalled = Latch()
            let launcher = Launcher()
            try launcher.add(
                TestStartupTask("config") {
                    await bothCalled.wait()
                    try Task.checkCancellation()
                })
            let start = { Task<Void, any Error> { try launcher.start() } }
            let cancel = { Task<Void, any Error> { launcher.cancel() } }
            let cancelFirst = Bool.random(using: &random)
            let calls = cancelFirst ? [cancel(), start()] : [start(), cancel()]
            for call in calls { try await call.value }
            bothCalled.open()
            let outcome = try await launcher.report().outcome
            #expect(outcome == .cancelled, "round \(round), cancel issued first: \(cancelFirst)")
        }
    }

    // MARK: - Nesting

    @Test func aLauncherRunsAsATaskOfAnotherLauncher() async throws {
        let order = Recorder<String>()
        let inner = Launcher("services")
        try inner.add(TestStartupTask("db") { order.append("db") })
        try inner.add(TestStartupTask("cache") { order.append("cache") })
        let outer = Launcher()
        try outer.add(TestStartupTask("channel") { order.append("channel") })
        try outer.add(inner)
        try outer.add(TestStartupTask("home") { order.append("home") })
        try await outer.run()
        #expect(order.all == ["channel", "db", "cache", "home"])
        #expect(try await outer.report()["services"]?.outcome.isSuccess == true)
    }

    @Test func aNestedFailureNamesTheInnerTask() async throws {
        let inner = Launcher("services")
        try inner.add(TestStartupTask("db") { throw Offline() })
        let outer = Launcher()
        try outer.add(inner)
        let error = await #expect(throws: LaunchError.self) { try await outer.run() }
        #expect(error?.taskName == "services")
        #expect(error?.message.contains("'db' failed: offline") == true)
    }
}
