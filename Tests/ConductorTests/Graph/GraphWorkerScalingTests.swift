import Testing

@testable import ConductorAssembly
@testable import ConductorCore
@testable import ConductorGate
@testable import ConductorGraph
@testable import ConductorHarmonizer
@testable import ConductorLaunch
@testable import ConductorReports

/// When a run uses a second core: the state machine alone, with the bodies' durations passed
/// in, so no test here depends on how fast the machine is.
///
/// A run starts one worker, inline on the driver's thread. Short bodies stay on it (handing
/// tasks between cores would cost more than the bodies); two long bodies in a row while tasks
/// wait end the inline worker, and the driver starts the waiting task in a helper on a thread
/// of its own and the next one inline.
@Suite struct GraphWorkerScalingTests {
    private static let short: Int64 = 100
    private static let long: Int64 = GraphWorkers.helperThreshold

    private func machine(tasks: Int, parallelWorkers: Int = 1) -> GraphStateMachine {
        var graph = TaskGraph()
        for index in 0..<tasks { graph.add("t\(index)") { _ in } }
        var machine = GraphStateMachine(concurrencyLimit: .max, parallelWorkers: parallelWorkers)
        var effects = GraphEffects()
        machine.insert(graph.definitions, now: 0, effects: &effects)
        return machine
    }

    /// The driver's next action, which must be a spawn.
    private func spawn(_ machine: inout GraphStateMachine, now: Int64) throws -> (GraphStateMachine.Assignment, Bool) {
        let action = machine.nextForDriver(now: now)
        guard case .spawn(let assignment, let inline) = action else {
            Issue.record("expected a spawn, got \(action)")
            throw CancellationError()
        }
        return (assignment, inline)
    }

    /// Runs `worker`'s chain with bodies of `duration` each until the machine gives it no next
    /// task; returns how many it ran and the time after the last.
    private func runChain(
        _ machine: inout GraphStateMachine, from first: GraphStateMachine.Assignment, duration: Int64,
        helper: Bool = false, now start: Int64
    ) -> (ran: Int, now: Int64) {
        var assignment = first
        var now = start
        var ran = 0
        while true {
            var effects = GraphEffects()
            let next = machine.complete(
                assignment.node, outcome: .succeeded, startedAt: now, now: now + duration, helper: helper,
                effects: &effects)
            now += duration
            ran += 1
            guard let next else { return (ran, now) }
            assignment = next
        }
    }

    @Test func shortBodiesStayOnOneInlineWorker() throws {
        var machine = machine(tasks: 100)
        let (first, inline) = try spawn(&machine, now: 0)
        #expect(inline)
        let (ran, now) = runChain(&machine, from: first, duration: Self.short, now: 0)
        #expect(ran == 100)
        #expect(machine.workers.liveHelpers == 0)
        #expect(machine.workers.liveWorkers == 0)
        guard case .finish = machine.nextForDriver(now: now) else {
            Issue.record("the run should have finished")
            return
        }
    }

    @Test func twoLongBodiesBringInAHelperAndTheNextInlineWorker() throws {
        var machine = machine(tasks: 10)
        let (first, _) = try spawn(&machine, now: 0)
        let (ran, now) = runChain(&machine, from: first, duration: Self.long, now: 0)
        // The inline worker gave its thread back after its second long body.
        #expect(ran == 2)
        #expect(machine.workers.helperWanted)
        let (helperTask, helperInline) = try spawn(&machine, now: now)
        #expect(!helperInline)
        #expect(machine.workers.liveHelpers == 1)
        let (inlineTask, secondInline) = try spawn(&machine, now: now)
        #expect(secondInline)
        // With every helper running, long bodies keep the inline worker going.
        let inlineChain = runChain(&machine, from: inlineTask, duration: Self.long, now: now)
        let helperChain = runChain(&machine, from: helperTask, duration: Self.long, helper: true, now: now)
        #expect(ran + inlineChain.ran + helperChain.ran == 10)
        #expect(machine.workers.liveHelpers == 0)
        guard case .finish = machine.nextForDriver(now: helperChain.now) else {
            Issue.record("the run should have finished")
            return
        }
    }

    /// Long bodies first, short ones after: the helper retires after
    /// `helperRetiresAfter` short bodies in a row while the inline worker is alive, and the
    /// inline worker runs the rest.
    @Test func aHelperRetiresWhenBodiesGetShortAgain() throws {
        let tasks = 200
        var machine = machine(tasks: tasks)
        let (first, _) = try spawn(&machine, now: 0)
        let (ran, now) = runChain(&machine, from: first, duration: Self.long, now: 0)
        let (helperTask, helperInline) = try spawn(&machine, now: now)
        let (inlineTask, _) = try spawn(&machine, now: now)
        #expect(!helperInline)
        let helperChain = runChain(&machine, from: helperTask, duration: Self.short, helper: true, now: now)
        #expect(helperChain.ran == GraphWorkers.helperRetiresAfter)
        #expect(machine.workers.liveHelpers == 0)
        #expect(machine.workers.liveWorkers == 1)
        let inlineChain = runChain(&machine, from: inlineTask, duration: Self.short, now: now)
        #expect(ran + helperChain.ran + inlineChain.ran == tasks)
        guard case .finish = machine.nextForDriver(now: inlineChain.now) else {
            Issue.record("the run should have finished")
            return
        }
    }

    /// One long body (a preemption, say) is not enough; nor are long bodies when nothing waits.
    @Test func oneLongBodyOrNothingWaitingKeepsOneWorker() throws {
        var machine = machine(tasks: 4)
        let (first, _) = try spawn(&machine, now: 0)
        var effects = GraphEffects()
        let second = machine.complete(
            first.node, outcome: .succeeded, startedAt: 0, now: Self.long, effects: &effects)
        #expect(second != nil)
        let rest = runChain(&machine, from: try #require(second), duration: Self.short, now: Self.long)
        #expect(rest.ran == 3)
        #expect(!machine.workers.helperWanted)

        var lastTwo = self.machine(tasks: 2)
        let (only, _) = try spawn(&lastTwo, now: 0)
        let chain = runChain(&lastTwo, from: only, duration: Self.long, now: 0)
        #expect(chain.ran == 2)
        #expect(!lastTwo.workers.helperWanted)
    }
}
