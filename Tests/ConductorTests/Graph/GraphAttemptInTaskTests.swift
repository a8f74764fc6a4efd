import Testing

@testable import ConductorAssembly
@testable import ConductorCore
@testable import ConductorGate
@testable import ConductorGraph
@testable import ConductorHarmonizer
@testable import ConductorLaunch
@testable import ConductorReports

/// An attempt whose body runs in a task of its own (the task has a timeout), raced against its
/// timeout and against removal: the state machine alone, each side of each race driven by
/// hand, so every order is checked, not only the ones a scheduler happens to produce.
@Suite struct GraphAttemptInTaskTests {
    private struct Failure: Error {}

    /// A machine with one task, "fetch", with a timeout and `attempts` attempts, handed to a
    /// worker: its first attempt is registered. On the main actor, so that even with one
    /// attempt its body runs in a task of its own (a timeout alone runs on the worker, under
    /// the run's deadlines: GraphDeadlineTests); the machine never calls it.
    private func started(attempts: Int = 1) throws -> (GraphStateMachine, node: Int) {
        var graph = TaskGraph()
        graph.addOnMainActor(
            "fetch", options: TaskOptions(timeout: .seconds(1), retry: .attempts(attempts, backoff: .zero))
        ) { _ in }
        return try GraphStateMachine.handingOutTheFirstTask(of: graph)
    }

    private func isCancelled(_ result: AttemptInTask.Result) -> Bool {
        if case .cancelled = result { return true }
        return false
    }

    @Test func removalBeforeTheClaimPreventsTheBody() throws {
        var (machine, node) = try started()
        var effects = GraphEffects()
        let removal = machine.remove("fetch", now: 1, effects: &effects)
        #expect(removal == .abandoned)
        guard case .settled(let result) = machine.attempts.claim(node, number: 1) else {
            Issue.record("an abandoned attempt was claimed: its body would start")
            return
        }
        #expect(isCancelled(result))
        #expect(!machine.attempts.isOpen(node, number: 1))
    }

    @Test func theFirstSettlementWinsAndWakesTheWorker() async throws {
        var (machine, node) = try started()
        guard case .claimed = machine.attempts.claim(node, number: 1) else {
            Issue.record("a fresh attempt was not claimed")
            return
        }
        let state = Lock(machine)
        // The worker waits; once it is registered (`perform`), the timeout settles the
        // attempt and must hand the worker back, or this test never returns.
        await state.suspendIgnoringCancellation(
            { (machine: inout GraphStateMachine, waiter) in machine.attempts.wait(node, number: 1, waiter) },
            perform: { _ in
                let worker = state.withLock { $0.attempts.settle(node, number: 1, with: .timedOut(.seconds(1))) }
                #expect(worker != nil)
                worker?.resume(returning: ())
            })
        // The body's late success changes nothing.
        #expect(state.withLock { $0.attempts.settle(node, number: 1, with: .success(())) } == nil)
        let result = state.withLock { $0.attempts.result(node, number: 1) }
        guard case .timedOut = result else {
            Issue.record("the timeout settled first, but \(result) is reported")
            return
        }
        // A removal after the settlement changes nothing either: the task has ended.
        var effects = GraphEffects()
        #expect(state.withLock { $0.remove("fetch", now: 2, effects: &effects) } == .alreadyEnded)
        #expect(effects.resumeWaiters.isEmpty && effects.cancelBodies.isEmpty)
    }

    @Test func aResultOfAnEarlierAttemptGoesNowhere() throws {
        var (machine, node) = try started(attempts: 2)
        _ = machine.attempts.settle(node, number: 1, with: .failure(Failure()))
        var effects = GraphEffects()
        let answer1 = machine.attemptFailed(node, attempt: 1, error: Failure(), delay: .zero, now: 1, effects: &effects)
        #expect(answer1)
        let answer2 = machine.retryStarting(node, attempt: 2, now: 2)
        #expect(answer2 == .start)
        #expect(machine.attempts.isOpen(node, number: 2))
        // Attempt 1's timer fires late.
        let worker = machine.attempts.settle(node, number: 1, with: .timedOut(.seconds(1)))
        #expect(worker == nil)
        #expect(machine.attempts.isOpen(node, number: 2))
    }

    /// The removal comes after a failed attempt settled but before its worker recorded the
    /// failure: the retry is prevented, and the worker is told not to sleep out a backoff.
    @Test func removalAfterAFailedAttemptSettledPreventsTheRetry() throws {
        var (machine, node) = try started(attempts: 2)
        _ = machine.attempts.settle(node, number: 1, with: .failure(Failure()))
        var effects = GraphEffects()
        let removal = machine.remove("fetch", now: 1, effects: &effects)
        #expect(removal == .prevented)
        let answer3 = machine.attemptFailed(node, attempt: 1, error: Failure(), delay: .zero, now: 2, effects: &effects)
        #expect(!answer3)
        let answer4 = machine.retryStarting(node, attempt: 2, now: 3)
        #expect(answer4 == .refused)
        _ = machine.complete(node, outcome: .cancelled, startedAt: 0, now: 3, effects: &effects)
        let record = RunReport(of: machine).tasks.first
        #expect(record?.outcome.kind == .cancelled)
        #expect(record?.attempts == 1)
    }

    /// With no attempt left, the same removal finds the task ended: the worker records the
    /// failure its body returned.
    @Test func removalAfterTheLastAttemptFailedFindsItEnded() throws {
        var (machine, node) = try started(attempts: 1)
        _ = machine.attempts.settle(node, number: 1, with: .failure(Failure()))
        var effects = GraphEffects()
        let removal = machine.remove("fetch", now: 1, effects: &effects)
        #expect(removal == .alreadyEnded)
    }

    @Test func aStopSettlesEveryOpenAttemptAndWakesItsWorker() async throws {
        var (machine, node) = try started()
        _ = machine.attempts.claim(node, number: 1)
        let state = Lock(machine)
        await state.suspendIgnoringCancellation(
            { (machine: inout GraphStateMachine, waiter) in machine.attempts.wait(node, number: 1, waiter) },
            perform: { _ in
                var effects = GraphEffects()
                state.withLock { $0.cancel(now: 1, effects: &effects) }
                #expect(effects.resumeWaiters.count == 1)
                for worker in effects.resumeWaiters { worker.resume(returning: ()) }
            })
        #expect(isCancelled(state.withLock { $0.attempts.result(node, number: 1) }))
    }
}
