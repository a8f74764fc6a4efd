import ConductorTestKit
import Testing

@testable import ConductorAssembly
@testable import ConductorCore
@testable import ConductorGate
@testable import ConductorGraph
@testable import ConductorHarmonizer
@testable import ConductorLaunch
@testable import ConductorReports

/// The launcher's machine driven by hand, one transition at a time, with no concurrency: what
/// each operation changes and what it asks the launcher to do once its lock is released.
@Suite struct LauncherStateMachineTests {
    private func task(_ name: String, dependencies: TaskDependencies = .inOrderOfAddition) -> LaunchPlan.Entry {
        .task(LaunchPlan.TaskSnapshot(TestStartupTask(name, dependencies: dependencies)))
    }

    /// A run that is never driven: the machine only hands it around.
    private func makeRun() -> GraphRunStorage {
        GraphRunStorage(concurrencyLimit: nil, clock: ClockSource(ManualClock()), name: "launch")
    }

    /// A machine whose launch has begun on `run`, with the tasks `names` in its plan.
    private func starting(_ run: GraphRunStorage, with names: [String] = ["a"]) throws -> LauncherStateMachine {
        var machine = LauncherStateMachine()
        for name in names { _ = try machine.add(task(name)) }
        let ticket = try machine.start(run)
        #expect(ticket == 0)
        return machine
    }

    // MARK: - Adding and removing

    @Test func beforeTheLaunchAnAdditionIsKeptAndItsNameTaken() throws {
        var machine = LauncherStateMachine()
        guard case .kept = try machine.add(task("a")) else {
            Issue.record("not kept")
            return
        }
        #expect(machine.plan.isTask("a"))
        #expect(machine.additions(upTo: 0) == nil, "nothing is queued for a run before the launch")
        #expect(throws: LaunchError.self) { _ = try machine.add(task("a")) }
        #expect(throws: LaunchError.self) { _ = try machine.add(task("b", dependencies: ["missing"])) }
    }

    @Test func beforeTheLaunchARemovalPreventsTheTaskAndFreesItsName() throws {
        var machine = LauncherStateMachine()
        _ = try machine.add(task("a"))
        _ = try machine.add(task("b"))
        guard case .prevented = machine.remove("a") else {
            Issue.record("not prevented")
            return
        }
        guard case .unknown = machine.remove("a") else {
            Issue.record("removed twice")
            return
        }
        guard case .kept = try machine.add(task("a")) else {
            Issue.record("name not freed")
            return
        }
        let removeAll = machine.removeAll()
        #expect(removeAll == nil, "before the launch there is no run to remove from")
        #expect(!machine.plan.isTask("a") && !machine.plan.isTask("b"))
    }

    @Test func duringTheLaunchAdditionsAreQueuedInOrderUntilTheGraphHasThem() throws {
        let run = makeRun()
        var machine = try starting(run)
        guard case .deliver(let first, let to) = try machine.add(task("b")) else {
            Issue.record("not queued for the run")
            return
        }
        #expect(first == 1 && to === run)
        guard case .deliver(let second, _) = try machine.add(task("c")) else {
            Issue.record("not queued")
            return
        }
        #expect(second == 2)
        // Whoever hands over `c` hands over everything before it, the launch's plan included.
        #expect(machine.additions(upTo: second)?.map(\.ticket) == [0, 1, 2])
        machine.delivered(upTo: first)
        #expect(machine.additions(upTo: first) == nil, "delivered: the graph has it")
        #expect(machine.additions(upTo: second)?.map(\.ticket) == [2])
        machine.delivered(upTo: second)
        #expect(machine.additions(upTo: second) == nil)
    }

    @Test func duringTheLaunchARemovalGoesToTheRunForTasksOnly() throws {
        let run = makeRun()
        var machine = try starting(run, with: ["a", "b"])
        _ = try machine.add(.readiness("ready", after: ["a"]))
        guard case .remove(let from) = machine.remove("a") else {
            Issue.record("not removed from the run")
            return
        }
        #expect(from === run)
        guard case .unknown = machine.remove("ready") else {
            Issue.record("a readiness set is no task")
            return
        }
        guard case .unknown = machine.remove("missing") else {
            Issue.record("an unknown name")
            return
        }
        let removeAll = machine.removeAll()
        let all = try #require(removeAll)
        #expect(all.run === run)
        #expect(all.tasks == ["a", "b"])
    }

    // MARK: - Launching

    @Test func startBeginsTheLaunchOnceAndQueuesThePlanFirst() throws {
        let run = makeRun()
        var machine = try starting(run, with: ["a", "b"])
        guard case .starting(let starting) = machine.phase else {
            Issue.record("not starting")
            return
        }
        #expect(starting === run)
        #expect(machine.hasStarted)
        #expect(machine.launched == nil, "nobody hears of the run before it has the plan")
        #expect(machine.additions(upTo: 0)?.first?.definitions.filter { !$0.isHidden }.map(\.id) == ["a", "b"])
        let second = try machine.start(makeRun())
        #expect(second == nil, "a second start does nothing")
        let launch = machine.launch()
        #expect(!launch.cancel && launch.waiters.isEmpty)
        #expect(machine.launched === run)
    }

    @Test func aPlanThatFailsValidationLeavesTheMachineIdleAndThePlanAsItWas() throws {
        var machine = LauncherStateMachine()
        _ = try machine.add(task("a"))
        _ = try machine.add(.readiness("ready", after: ["a"]))
        _ = machine.remove("a")
        #expect(throws: LaunchError.self) { _ = try machine.start(makeRun()) }
        #expect(!machine.hasStarted)
        #expect(machine.plan.entries.map(\.name) == ["ready"])
    }

    @Test func aCancelBeforeTheLaunchIsRememberedAndReadAsItIsLaunched() throws {
        var machine = LauncherStateMachine()
        guard case .remembered = machine.cancel(byRun: false) else {
            Issue.record("not remembered")
            return
        }
        let run = makeRun()
        _ = try machine.start(run)
        // While `start()` hands the plan over, a cancel is still remembered.
        guard case .remembered = machine.cancel(byRun: false) else {
            Issue.record("not remembered")
            return
        }
        let launch = machine.launch()
        #expect(launch.cancel)
        guard case .cancel(let cancelled) = machine.cancel(byRun: false) else {
            Issue.record("not cancelled")
            return
        }
        #expect(cancelled === run)
    }

    /// `run()` whose own `start()` threw leaves no cancel behind for a later `start()`.
    @Test func aCancelByARunThatDidNotStartIsForgotten() throws {
        var machine = LauncherStateMachine()
        _ = machine.cancel(byRun: true)
        machine.runDidNotStart()
        _ = try machine.start(makeRun())
        let launch = machine.launch()
        #expect(!launch.cancel)
    }

    @Test func aCancelByRunBeforeTheLaunchCancelsIt() throws {
        var machine = LauncherStateMachine()
        _ = machine.cancel(byRun: true)
        _ = try machine.start(makeRun())
        let launch = machine.launch()
        #expect(launch.cancel)
    }

    // MARK: - Waiting for the launch

    @Test func waitersForTheLaunchAreLetGoWhenItIsLaunched() async throws {
        let run = makeRun()
        var machine = LauncherStateMachine()
        await withCheckedContinuation { continuation in
            let waiter = WaiterSet<Void>.Waiter(id: 1, continuation: continuation)
            guard case .wait = machine.waitForLaunch(waiter) else {
                Issue.record("answered before the launch")
                return continuation.resume()
            }
            _ = try? machine.start(run)
            let launch = machine.launch()
            #expect(launch.waiters.map(\.id) == [1])
            for waiter in launch.waiters { waiter.resume(returning: ()) }
        }
        #expect(machine.launched === run)
        await withCheckedContinuation { continuation in
            let waiter = WaiterSet<Void>.Waiter(id: 2, continuation: continuation)
            guard case .resume = machine.waitForLaunch(waiter) else {
                Issue.record("kept after the launch")
                return continuation.resume()
            }
            continuation.resume()
        }
    }

    @Test func aCancelledWaiterIsTakenOutOnce() async throws {
        var machine = LauncherStateMachine()
        await withCheckedContinuation { continuation in
            let waiter = WaiterSet<Void>.Waiter(id: 7, continuation: continuation)
            _ = machine.waitForLaunch(waiter)
            let removed = machine.stopWaitingForLaunch(7)
            let again = machine.stopWaitingForLaunch(7)
            #expect(removed?.id == 7)
            #expect(again == nil)
            removed?.resume(returning: ())
        }
        _ = try machine.start(makeRun())
        let launch = machine.launch()
        #expect(launch.waiters.isEmpty)
    }

    // MARK: - Shutting down

    @Test func aShutdownBeforeTheLaunchHasNothingToWaitForAndCancelsALaterOne() throws {
        var machine = LauncherStateMachine()
        guard case .first(nil, launched: false) = machine.beginShutdown() else {
            Issue.record("not first")
            return
        }
        guard case .join = machine.beginShutdown() else {
            Issue.record("a second call leads")
            return
        }
        _ = try machine.start(makeRun())
        let launch = machine.launch()
        #expect(launch.cancel)
    }

    @Test func aShutdownWhileStartingWaitsForTheLaunchWhichCancelsItself() throws {
        var machine = try starting(makeRun())
        guard case .first(nil, launched: true) = machine.beginShutdown() else {
            Issue.record("not first")
            return
        }
        let launch = machine.launch()
        #expect(launch.cancel)
    }

    @Test func aShutdownAfterTheLaunchCancelsItsRunAndSettlesItsReportOnce() throws {
        let run = makeRun()
        var machine = try starting(run)
        _ = machine.launch()
        guard case .first(let cancel, launched: true) = machine.beginShutdown() else {
            Issue.record("not first")
            return
        }
        #expect(cancel === run)
        let report = ShutdownReport(undos: [], startedAt: .zero, endedAt: .seconds(1))
        #expect(machine.finishShutdown(report).isEmpty)
        #expect(machine.shutdown.outcome?.endedAt == .seconds(1))
        _ = machine.finishShutdown(ShutdownReport(undos: [], startedAt: .zero, endedAt: .seconds(2)))
        #expect(machine.shutdown.outcome?.endedAt == .seconds(1), "the first report stays")
    }
}
