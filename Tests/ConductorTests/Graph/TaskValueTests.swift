import ConductorTestKit
import Testing

@testable import ConductorGraph

/// ``GraphRun/value(of:)`` from outside the run, and runs held open until ``GraphRun/close()``.
@Suite(.timeLimit(.minutes(1))) struct TaskValueTests {
    private struct Offline: Error {}

    // MARK: - Values

    /// The issue's example: an iterative Fibonacci that adds one task per step to an open run
    /// and awaits each value from outside. Without `staysOpen` the run would finish after the
    /// first step, and the second `add` would throw `runFinished`.
    @Test func anOpenRunComputesFibonacciOneTaskAtATime() async throws {
        let run = try TaskGraph().start(staysOpen: true)
        var (a, b) = (0, 1)
        for step in 0..<30 {
            let next = try run.add("fib-\(step)") { [a, b] _ in a + b }
            (a, b) = (b, try await run.value(of: next))
        }
        #expect(b == 1_346_269)
        #expect(run.storage.outcome == nil)
        run.close()
        let report = try await run.report()
        #expect(report.outcome == .completed)
        #expect(report.tasks.count == 30)
    }

    @Test func aHandleFromTheGraphNamesTheRunsTask() async throws {
        let gate = Latch()
        var graph = TaskGraph()
        let answer = graph.add("answer") { _ in
            await gate.wait()
            return 42
        }
        graph.add("void") { _ in }
        let run = try graph.start()
        let waiting = Task { try await run.value(of: answer) }
        gate.open()
        #expect(try await waiting.value == 42)
        // Asked again after the end: the value is kept.
        #expect(try await run.value(of: answer) == 42)
        try await run.value(of: TaskHandle<Void>(id: "void"))
    }

    @Test func manyWaitersOfOneTaskAllGetItsValue() async throws {
        let gate = Latch()
        let run = try TaskGraph().start(staysOpen: true)
        let first = try run.add("first") { _ in await gate.wait() }
        let second = try run.add("second", dependsOn: ["first"]) { _ in "done" }
        let waiters = (0..<4).map { _ in Task { try await run.value(of: second) } }
        gate.open()
        try await run.value(of: first)
        for waiter in waiters { #expect(try await waiter.value == "done") }
        run.close()
        #expect(try await run.report().outcome == .completed)
    }

    @Test func aFailedTaskThrowsItsErrorAsTheUnderlyingOne() async throws {
        var graph = TaskGraph()
        let failing = graph.add("failing", options: TaskOptions(failure: .optional)) { _ -> Int in throw Offline() }
        let run = try graph.start()
        let error = await #expect(throws: GraphError.self) { try await run.value(of: failing) }
        #expect(error?.code == .taskFailed)
        #expect(error?.message == "task 'failing' failed: Offline()")
        #expect(error?.taskID == "failing")
        #expect(error?.underlyingError is Offline)
        #expect(try await run.report().outcome == .completed)
    }

    @Test func aSkippedTaskThrowsNamingTheDependency() async throws {
        var graph = TaskGraph()
        graph.add("config", options: TaskOptions(failure: .optional)) { _ in throw Offline() }
        let page = graph.add("page", dependsOn: ["config"], options: TaskOptions(failure: .optional)) { _ in 1 }
        let run = try graph.start()
        let error = await #expect(throws: GraphError.self) { try await run.value(of: page) }
        #expect(error?.code == .taskFailed)
        #expect(error?.message == "task 'page' was skipped: 'config' did not succeed")
    }

    @Test func aTimedOutTaskThrowsTimedOut() async throws {
        let clock = ManualClock()
        let latch = Latch()
        var graph = TaskGraph()
        let sku = graph.add("sku", options: TaskOptions(timeout: .seconds(2), failure: .optional)) { _ in
            _ = await latch.waitCancellable()
            return 1
        }
        let run = try graph.start(clock: clock)
        let waiting = Task { try await run.value(of: sku) }
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(2))
        let error = await #expect(throws: GraphError.self) { try await waiting.value }
        #expect(error?.code == .timedOut)
        #expect(error?.message == "task 'sku' timed out after 2.00 s")
        latch.open()
        _ = try await run.report()
    }

    @Test func aRemovedTaskThrowsCancelledSayingSo() async throws {
        let (run, latch) = try Self.startHeldRun()
        let later = try run.add("later", dependsOn: ["held"]) { _ in 1 }
        let waiting = Task { try await run.value(of: later) }
        #expect(try run.remove("later") == .prevented)
        let error = await #expect(throws: GraphError.self) { try await waiting.value }
        #expect(error?.code == .cancelled)
        #expect(error?.message == "task 'later' was removed and has no value")
        latch.open()
        #expect(try await run.report().outcome == .completed)
    }

    @Test func aTaskOfACancelledRunThrowsCancelled() async throws {
        let (run, latch) = try Self.startHeldRun()
        let later = try run.add("later", dependsOn: ["held"]) { _ in 1 }
        let waiting = Task { try await run.value(of: later) }
        run.cancel()
        let error = await #expect(throws: GraphError.self) { try await waiting.value }
        #expect(error?.code == .cancelled)
        #expect(error?.message == "task 'later' ended cancelled and has no value")
        latch.open()
        #expect(try await run.report().outcome == .cancelled)
    }

    @Test func anUnknownTaskOrAMilestoneThrowsUnknownTask() async throws {
        let (run, latch) = try Self.startHeldRun()
        try run.add(
            {
                var graph = TaskGraph()
                graph.addMilestone("firstScreen", after: ["held"])
                return graph
            }())
        for id in ["ghost", "firstScreen"] {
            let error = await #expect(throws: GraphError.self) { try await run.value(of: TaskHandle<Int>(id: id)) }
            #expect(error?.code == .unknownTask)
            #expect(error?.message == "no task with id '\(id)'")
        }
        latch.open()
        _ = try await run.report()
    }

    @Test func aHandleOfAnotherTypeThrowsResultUnavailable() async throws {
        var graph = TaskGraph()
        graph.add("count") { _ in 3 }
        let run = try graph.start()
        let error = await #expect(throws: GraphError.self) { try await run.value(of: TaskHandle<String>(id: "count")) }
        #expect(error?.code == .resultUnavailable)
        #expect(error?.message == "task 'count' does not return String")
    }

    /// A waiter that gives up throws and leaves the task alone: it goes on and succeeds.
    @Test func aCancelledWaiterThrowsAndTheTaskGoesOn() async throws {
        let (run, latch) = try Self.startHeldRun()
        let held = TaskHandle<Void>(id: "held")
        let waiter = Task { try await run.value(of: held) }
        waiter.cancel()
        let error = await #expect(throws: GraphError.self) { try await waiter.value }
        #expect(error?.code == .cancelled)
        #expect(error?.message == "waiting for the value of task 'held' was cancelled; the task goes on")
        latch.open()
        try await run.value(of: held)
        #expect(try await run.report().isSuccess)
    }

    // MARK: - Open runs

    /// An empty run started open waits for what is added; closing it finishes it at once.
    @Test func anEmptyOpenRunFinishesWhenClosed() async throws {
        let run = try TaskGraph().start(staysOpen: true)
        let one = try run.add("one") { _ in 1 }
        #expect(try await run.value(of: one) == 1)
        #expect(run.storage.outcome == nil)
        run.close()
        let report = try await run.report()
        #expect(report.outcome == .completed)
        #expect(report.tasks.map(\.id) == ["one"])
        // Closing twice does nothing; adding to the finished run throws.
        run.close()
        let error = try #require(throws: GraphError.self) { try run.add("late") { _ in } }
        #expect(error.code == .runFinished)
    }

    /// Closed while a task runs: the run finishes once that task has ended, and `add` works
    /// until then.
    @Test func aClosedRunFinishesOnceWhatItHoldsHasEnded() async throws {
        let gate = Latch()
        var graph = TaskGraph()
        graph.add("slow") { _ in await gate.wait() }
        let run = try graph.start(staysOpen: true)
        run.close()
        let added = try run.add("added", dependsOn: ["slow"]) { _ in 2 }
        #expect(run.storage.outcome == nil)
        gate.open()
        #expect(try await run.value(of: added) == 2)
        #expect(try await run.report().outcome == .completed)
    }

    @Test func cancellingAnOpenRunFinishesIt() async throws {
        let run = try TaskGraph().start(staysOpen: true)
        let one = try run.add("one") { _ in 1 }
        _ = try await run.value(of: one)
        run.cancel()
        #expect(try await run.report().outcome == .cancelled)
        #expect(throws: GraphError.self) { try run.add("late") { _ in } }
    }

    /// `run(staysOpen:)` keeps the run open while its body goes on adding, and closes it when
    /// the body returns.
    @Test func aStructuredRunStaysOpenUntilItsBodyReturns() async throws {
        let report = try await TaskGraph().run(staysOpen: true) { run in
            var total = 0
            for step in 1...5 {
                guard let next = try? run.add("step-\(step)", { [total] _ in total + step }),
                    let value = try? await run.value(of: next)
                else {
                    Issue.record("step \(step) did not run")
                    return
                }
                total = value
            }
            #expect(total == 15)
        }
        #expect(report.outcome == .completed)
        #expect(report.tasks.map(\.id) == ["step-1", "step-2", "step-3", "step-4", "step-5"])
    }

    /// The state machine alone: an open run whose nodes have all ended is not finished until
    /// it is closed, and a stop ends it whether or not it is open.
    @Test func theMachineFinishesAnOpenRunOnlyOnceClosed() throws {
        var machine = GraphStateMachine(concurrencyLimit: 1, parallelWorkers: 1, staysOpen: true)
        var effects = GraphEffects()
        machine.insert([], now: 0, effects: &effects)
        #expect(machine.outcome == nil)
        machine.close(now: 1, effects: &effects)
        #expect(machine.outcome == .completed)

        var stopped = GraphStateMachine(concurrencyLimit: 1, parallelWorkers: 1, staysOpen: true)
        stopped.cancel(now: 1, effects: &effects)
        #expect(stopped.outcome == .cancelled)
    }

    /// A run whose only task, `held`, runs until the latch opens (or the run is cancelled).
    static func startHeldRun() throws -> (GraphRun, Latch) {
        let latch = Latch()
        var graph = TaskGraph()
        graph.add("held") { _ in
            _ = await latch.waitCancellable()
            try Task.checkCancellation()
        }
        return (try graph.start(), latch)
    }
}
