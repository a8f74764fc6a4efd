import Testing

@testable import ConductorAssembly
@testable import ConductorCore
@testable import ConductorGate
@testable import ConductorGraph
@testable import ConductorHarmonizer
@testable import ConductorLaunch
@testable import ConductorReports

/// The graph's state machine driven by hand, one transition at a time: time is a number, a
/// worker is a call of `complete`, and the only suspensions are the driver's and a milestone
/// waiter's, each resumed by the transition under test. Races between an attempt in a task of
/// its own, its timeout and a removal are `GraphAttemptInTaskTests`'; when a helper starts,
/// `GraphWorkerScalingTests`'.
@Suite struct GraphStateMachineTests {
    private struct Failure: Error {}

    typealias Machine = GraphStateMachine

    static func machine(_ graph: TaskGraph, limit: Int = .max) -> Machine {
        var machine = Machine(concurrencyLimit: limit, parallelWorkers: 1)
        var effects = GraphEffects()
        machine.insert(graph.definitions, now: 0, effects: &effects)
        return machine
    }

    /// The driver's next action, which must hand a task to a new worker.
    static func spawn(_ machine: inout Machine, now: Int64) throws -> Machine.Assignment {
        let action = machine.nextForDriver(now: now)
        guard case .spawn(let assignment, _) = action else {
            Issue.record("expected a spawn, got \(action)")
            throw CancellationError()
        }
        return assignment
    }

    /// The run's events so far, without their times: "queued a", "started a #1", ….
    static func events(_ machine: Machine) -> [String] {
        let events = GraphEventRecord.materialize(
            machine.journal.snapshot, definitions: machine.definitions, rare: machine.rareEvents)
        return events.map { event in
            switch event {
            case .stageStarted(let name, _): "stage \(name)"
            case .taskQueued(let id, _): "queued \(id)"
            case .taskStarted(let id, let attempt, _): "started \(id) #\(attempt)"
            case .taskSucceeded(let id, _): "succeeded \(id)"
            case .taskRetried(let id, let attempt, _, _, _): "retried \(id) after #\(attempt)"
            case .taskFailed(let id, _, _): "failed \(id)"
            case .taskTimedOut(let id, _): "timed out \(id)"
            case .taskSkipped(let id, let dependency, _): "skipped \(id) for \(dependency)"
            case .taskCancelled(let id, _): "cancelled \(id)"
            case .milestoneReached(let name, _): "reached \(name)"
            case .runFinished(let outcome, _): "finished \(outcome)"
            }
        }
    }

    // MARK: - Insert, take, complete

    @Test func insertQueuesTheTasksWithNothingToWaitFor() {
        var graph = TaskGraph()
        graph.add("a") { _ in }
        graph.add("b", dependsOn: ["a"]) { _ in }
        let machine = Self.machine(graph)
        #expect(Self.events(machine) == ["queued a"])
        #expect(machine.table.nodes.map(\.phase) == [.ready, .waiting])
        #expect(machine.outcome == nil)
    }

    @Test func takingATaskStartsItAndTakesItsSlot() throws {
        var graph = TaskGraph()
        graph.add("a") { _ in }
        graph.add("b") { _ in }
        var machine = Self.machine(graph, limit: 1)
        let first = try Self.spawn(&machine, now: 1)
        #expect(machine.id(of: first.node) == "a")
        #expect(machine.table.nodes[first.node].phase == .running)
        #expect(machine.workers.running == 1)
        // The one slot is taken: "b" waits, and so does the driver.
        guard case .wait = machine.nextForDriver(now: 1) else {
            Issue.record("a second task started beyond the limit")
            return
        }
        #expect(Self.events(machine) == ["queued a", "queued b", "started a #1"])
    }

    @Test func aSuccessReleasesTheSuccessorsAndHandsTheWorkerTheNext() throws {
        var graph = TaskGraph()
        graph.add("a") { _ in }
        graph.add("b", dependsOn: ["a"]) { _ in }
        var machine = Self.machine(graph)
        let a = try Self.spawn(&machine, now: 1)
        var effects = GraphEffects()
        let next = machine.complete(a.node, outcome: .succeeded, startedAt: 1, now: 2, effects: &effects)
        #expect(next.map { machine.id(of: $0.node) } == "b")
        #expect(effects.isEmpty)
        let last = machine.complete(
            try #require(next).node, outcome: .succeeded, startedAt: 2, now: 3, effects: &effects)
        #expect(last == nil)
        #expect(machine.outcome == .completed)
        #expect(
            Self.events(machine) == [
                "queued a", "started a #1", "succeeded a", "queued b", "started b #1", "succeeded b",
                "finished completed",
            ])
    }

    @Test func anOptionalFailureSkipsWhatRequiresItAndTheRunCompletes() throws {
        var graph = TaskGraph()
        graph.add("a", options: TaskOptions(failure: .optional)) { _ in }
        graph.add("b", dependsOn: ["a"], options: TaskOptions(failure: .optional)) { _ in }
        graph.add("c", dependsOn: ["a"], options: TaskOptions(whenDependencyFails: .runAnyway)) { _ in }
        var machine = Self.machine(graph)
        let a = try Self.spawn(&machine, now: 1)
        var effects = GraphEffects()
        let next = machine.complete(a.node, outcome: .failed(Failure()), startedAt: 1, now: 2, effects: &effects)
        #expect(next.map { machine.id(of: $0.node) } == "c")
        #expect(machine.table.nodes[1].phase == .skipped)
        _ = machine.complete(try #require(next).node, outcome: .succeeded, startedAt: 2, now: 3, effects: &effects)
        #expect(machine.outcome == .completed)
        let report = RunReport(of: machine)
        #expect(report["b"]?.outcome.kind == .skipped(dependency: "a"))
        #expect(report["c"]?.outcome.kind == .succeeded)
    }

    // MARK: - Stopping

    @Test func aRequiredFailureStopsTheRun() throws {
        var graph = TaskGraph()
        graph.add("a") { _ in }
        graph.add("b") { _ in }
        var machine = Self.machine(graph, limit: 1)
        let a = try Self.spawn(&machine, now: 1)
        var effects = GraphEffects()
        let next = machine.complete(a.node, outcome: .failed(Failure()), startedAt: 1, now: 2, effects: &effects)
        #expect(next == nil)
        // The waiting task ended cancelled with the stop, and the run is over.
        #expect(machine.table.nodes[1].phase == .cancelled)
        guard case .failed(let error) = machine.outcome else {
            Issue.record("the run ended \(String(describing: machine.outcome))")
            return
        }
        #expect(error.taskID == "a")
        guard case .cancelAll = machine.nextForDriver(now: 2) else {
            Issue.record("the driver was not told to cancel its workers")
            return
        }
        guard case .finish = machine.nextForDriver(now: 2) else {
            Issue.record("the driver was not told to finish")
            return
        }
    }

    @Test func cancelEndsPendingTasksAndTheRunEndsWithTheLastRunningOne() throws {
        var graph = TaskGraph()
        graph.add("a") { _ in }
        graph.add("b", dependsOn: ["a"]) { _ in }
        var machine = Self.machine(graph)
        let a = try Self.spawn(&machine, now: 1)
        var effects = GraphEffects()
        machine.cancel(now: 2, effects: &effects)
        #expect(!machine.isRunning)
        #expect(machine.table.nodes[1].phase == .cancelled)
        // "a" still runs: the run is stopping, not finished.
        #expect(machine.outcome == nil)
        let next = machine.complete(a.node, outcome: .cancelled, startedAt: 1, now: 3, effects: &effects)
        #expect(next == nil)
        #expect(machine.outcome == .cancelled)
        #expect(Self.events(machine).suffix(3) == ["cancelled b", "cancelled a", "finished cancelled"])
    }

    // MARK: - Retries and removal

    @Test func aFailedAttemptBacksOffAndTheNextWinsItsStart() throws {
        var graph = TaskGraph()
        graph.add("a", options: TaskOptions(retry: .attempts(2, backoff: .zero))) { _ in }
        var machine = Self.machine(graph)
        let a = try Self.spawn(&machine, now: 1)
        var effects = GraphEffects()
        let retries = machine.attemptFailed(
            a.node, attempt: 1, error: Failure(), delay: .seconds(1), now: 2, effects: &effects)
        #expect(retries)
        #expect(machine.table.nodes[a.node].flags.contains(.backingOff))
        // The backoff keeps its slot.
        #expect(machine.workers.running == 1)
        let restarts = machine.retryStarting(a.node, attempt: 2, now: 3)
        #expect(restarts == .start)
        #expect(!machine.table.nodes[a.node].flags.contains(.backingOff))
        _ = machine.complete(a.node, outcome: .succeeded, startedAt: 1, now: 4, effects: &effects)
        let report = RunReport(of: machine)
        #expect(report["a"]?.attempts == 2)
        #expect(report["a"]?.outcome.kind == .succeeded)
        #expect(
            Self.events(machine) == [
                "queued a", "started a #1", "retried a after #1", "started a #2", "succeeded a", "finished completed",
            ])
    }

    /// A removal during a backoff ends the task and gives its slot to the next ready task at
    /// once; its worker, waking from the backoff later, records nothing and frees no second slot.
    @Test func aRemovalDuringABackoffGivesItsSlotBack() throws {
        var graph = TaskGraph()
        graph.add("a", options: TaskOptions(retry: .attempts(3, backoff: .zero))) { _ in }
        graph.add("b") { _ in }
        var machine = Self.machine(graph, limit: 1)
        let a = try Self.spawn(&machine, now: 1)
        var effects = GraphEffects()
        let retries = machine.attemptFailed(
            a.node, attempt: 1, error: Failure(), delay: .seconds(1), now: 2, effects: &effects)
        #expect(retries)
        guard case .wait = machine.nextForDriver(now: 2) else {
            Issue.record("the backoff gave its slot away")
            return
        }
        let removal = machine.remove("a", now: 3, effects: &effects)
        #expect(removal == .prevented)
        #expect(machine.table.nodes[a.node].phase == .cancelled)
        #expect(machine.workers.running == 0)
        let b = try Self.spawn(&machine, now: 3)
        #expect(machine.id(of: b.node) == "b")
        // The backoff's worker wakes: its retry is refused, and its end frees nothing.
        let restarts = machine.retryStarting(a.node, attempt: 2, now: 4)
        #expect(restarts == .refused)
        let next = machine.complete(a.node, outcome: .cancelled, startedAt: 1, now: 4, effects: &effects)
        #expect(next == nil)
        #expect(machine.workers.running == 1)
        _ = machine.complete(b.node, outcome: .succeeded, startedAt: 3, now: 5, effects: &effects)
        #expect(machine.workers.running == 0)
        // A removal is no failure of the run.
        #expect(machine.outcome == .completed)
    }

    @Test func removingAPendingTaskPreventsItAndSkipsWhatRequiresIt() {
        var graph = TaskGraph()
        graph.add("a") { _ in }
        graph.add("b", dependsOn: ["a"]) { _ in }
        graph.add("c", dependsOn: ["b"]) { _ in }
        var machine = Self.machine(graph)
        var effects = GraphEffects()
        let first = machine.remove("b", now: 1, effects: &effects)
        #expect(first == .prevented)
        let second = machine.remove("b", now: 1, effects: &effects)
        #expect(second == .alreadyEnded)
        let unknown = machine.remove("nope", now: 1, effects: &effects)
        #expect(unknown == nil)
        #expect(machine.table.nodes[1].phase == .cancelled)
        // "c" lacks only a removed task: skipped, and no failure of the run.
        #expect(machine.table.nodes[2].phase == .skipped)
        #expect(machine.isRunning)
    }

    // MARK: - Milestones

    @Test func aMilestoneIsReachedOnceItsTasksHaveEnded() throws {
        var graph = TaskGraph()
        graph.add("a", options: TaskOptions(failure: .optional)) { _ in }
        graph.addMilestone("m", after: ["a"])
        var machine = Self.machine(graph)
        #expect(machine.milestones.outcome("m") == .some(nil))
        #expect(machine.milestones.outcome("other") == nil)
        let a = try Self.spawn(&machine, now: 1)
        var effects = GraphEffects()
        _ = machine.complete(a.node, outcome: .failed(Failure()), startedAt: 1, now: 5, effects: &effects)
        guard case .success(let at)?? = machine.milestones.outcome("m") else {
            Issue.record("the milestone was not reached")
            return
        }
        #expect(at == .nanoseconds(5))
        #expect(effects.reachedMilestones.map(\.name) == ["m"])
        #expect(RunReport(of: machine).milestones.map(\.name) == ["m"])
        #expect(Self.events(machine).contains("reached m"))
    }

    /// A task waiting for a milestone the run finishes without is resumed by the finish, and
    /// reads the milestone as missed.
    @Test func aMilestoneNotReachedWhenTheRunFinishesIsMissed() async throws {
        var graph = TaskGraph()
        graph.add("a") { _ in }
        graph.addMilestone("m", after: ["a"])
        var machine = Self.machine(graph)
        let a = try Self.spawn(&machine, now: 1)
        let state = Lock(machine)
        await state.suspendIgnoringCancellation(
            { (machine: inout Machine, waiter) in machine.milestones.wait(for: "m", waiter) },
            perform: { _ in
                var effects = GraphEffects()
                state.withLock { machine in
                    machine.cancel(now: 2, effects: &effects)
                    _ = machine.complete(a.node, outcome: .cancelled, startedAt: 1, now: 3, effects: &effects)
                }
                #expect(effects.resumeWaiters.count == 1)
                for waiter in effects.resumeWaiters { waiter.resume(returning: ()) }
            })
        let outcome = state.withLock { $0.milestones.outcome("m") }
        guard case .failure(let error)?? = outcome else {
            Issue.record("the milestone was not missed: \(String(describing: outcome))")
            return
        }
        #expect(error.code == .milestoneMissed)
        #expect(state.withLock { RunReport(of: $0).milestones.isEmpty })
    }

    // MARK: - The driver

    /// The driver parks when there is nothing to start, and the addition that brings a task
    /// hands it back.
    @Test func anAdditionWakesTheParkedDriver() async throws {
        let state = Lock(Machine(concurrencyLimit: .max, parallelWorkers: 1))
        guard case .wait = state.withLock({ $0.nextForDriver(now: 0) }) else {
            Issue.record("an empty run gave its driver work")
            return
        }
        await state.suspendIgnoringCancellation(
            { (machine: inout Machine, driver) in machine.parkDriver(driver) },
            perform: { _ in
                var graph = TaskGraph()
                graph.add("a") { _ in }
                var effects = GraphEffects()
                state.withLock { $0.insert(graph.definitions, now: 1, effects: &effects) }
                #expect(effects.resumeDriver != nil)
                effects.resumeDriver?.resume(returning: ())
            })
        guard case .spawn = state.withLock({ $0.nextForDriver(now: 2) }) else {
            Issue.record("the woken driver found no task")
            return
        }
    }

    /// A driver that comes to park while there is work goes on at once.
    @Test func theDriverDoesNotParkWhileThereIsWork() async {
        var graph = TaskGraph()
        graph.add("a") { _ in }
        let state = Lock(Self.machine(graph))
        // Returns only because the decision was to go on.
        await state.suspendIgnoringCancellation { (machine: inout Machine, driver) in machine.parkDriver(driver) }
        #expect(!state.withLock { $0.workers.driverIsParked })
    }

    // MARK: - Finish and report

    @Test func theReportFollowsTheCriticalPathAndTheTimes() throws {
        var graph = TaskGraph()
        graph.add("a") { _ in }
        graph.add("b") { _ in }
        graph.add("c", dependsOn: ["a", "b"]) { _ in }
        var machine = Self.machine(graph)
        let a = try Self.spawn(&machine, now: 1)
        var effects = GraphEffects()
        // "a" ends, then "b" (taken next by the same worker) ends later: "c" waited for "b".
        let b = try #require(machine.complete(a.node, outcome: .succeeded, startedAt: 1, now: 2, effects: &effects))
        let c = try #require(machine.complete(b.node, outcome: .succeeded, startedAt: 2, now: 7, effects: &effects))
        _ = machine.complete(c.node, outcome: .succeeded, startedAt: 7, now: 9, effects: &effects)
        let report = RunReport(of: machine)
        #expect(report.outcome == .completed)
        #expect(report.criticalPath == ["b", "c"])
        #expect(report.duration == .nanoseconds(9))
        #expect(report["b"]?.startedAt == .nanoseconds(2))
        #expect(report["b"]?.endedAt == .nanoseconds(7))
        #expect(report.tasks.count == 3)
        guard case .finish = machine.nextForDriver(now: 9) else {
            Issue.record("the driver of a finished run was not told to finish")
            return
        }
    }

    @Test func anEmptyGraphFinishesAtOnce() {
        let machine = Self.machine(TaskGraph())
        #expect(machine.outcome == .completed)
        #expect(Self.events(machine) == ["finished completed"])
    }
}
