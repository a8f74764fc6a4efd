import Conductor
import ConductorTestKit
import Synchronization

extension RefreshInvariant {
    /// Lets time run on `clock` until every task of a gate scenario has ended and the gate has
    /// settled (no refresh open, nothing queued), stepping by seeded lengths in
    /// `stepMilliseconds`. Returns `false` when `maxSteps` steps did not get there; throws
    /// `CancellationError` when the test is cancelled (its time limit).
    ///
    /// ```swift
    /// guard try await RefreshInvariant.drive(callers, gate: gate, clock: clock, seed: seed) else {
    ///     Issue.record("seed \(seed): the scenario had not settled after the driver's step budget")
    ///     return
    /// }
    /// ```
    static func drive(
        _ tasks: [Task<Void, Never>], gate: RequestGate<String>, clock: ManualClock, seed: UInt64,
        stepMilliseconds: ClosedRange<Int> = 10...150, maxSteps: Int = 100_000
    ) async throws -> Bool {
        let settled = Atomic(false)
        let finishLine = Task {
            for task in tasks { await task.value }
            await settle(gate)
            settled.store(true, ordering: .releasing)
            clock.stateChanged()
        }
        var stepper = SeededGenerator(seed: seed ^ 0xD21E)
        let reachedTheEnd = try await clock.advance(
            until: { settled.load(ordering: .acquiring) }, maxSteps: maxSteps,
            step: { .milliseconds(Int.random(in: stepMilliseconds, using: &stepper)) })
        if reachedTheEnd { await finishLine.value }
        return reachedTheEnd
    }
}
