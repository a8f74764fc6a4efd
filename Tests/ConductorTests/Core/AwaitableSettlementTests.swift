import ConductorTestKit
import Testing

@testable import ConductorAssembly
@testable import ConductorCore
@testable import ConductorGate
@testable import ConductorGraph
@testable import ConductorHarmonizer
@testable import ConductorLaunch
@testable import ConductorReports

/// `AwaitableSettlement` and `OnceCell`, built on it: the first settle wins and lets every
/// registered waiter go; a waiter cancelled while it waits is taken out and resumed once; a
/// cancelled task never registers.
@Suite(.timeLimit(.minutes(1)))
struct AwaitableSettlementTests {
    private typealias State = AwaitableSettlement<String>

    private final class Owner: Sendable {
        let state = Lock(State())
    }

    /// Waits as `Lock.wait(for:)` does, opening `registered` once the waiter is kept.
    private func read(_ owner: Owner, registered: ConductorTestKit.Latch) async -> String? {
        await owner.state.suspend(
            { (state: inout State, waiter: WaiterSet<Void>.Waiter) -> SuspensionDecision<Void, Bool> in
                switch state.register(waiter) {
                case .wait: return .wait(true)
                case .resume: return .resume((), false)
                }
            },
            cancelledNow: { _ in ((), false) },
            perform: { waits in if waits { registered.open() } },
            cancelled: { @Sendable state, id in
                guard let waiter = state.remove(id) else { return nil }
                return { waiter.resume(returning: ()) }
            })
        return owner.state.withLock { $0.outcome }
    }

    @Test func theFirstSettleWinsAndLetsEveryWaiterGo() async {
        let owner = Owner()
        var readers: [Task<String?, Never>] = []
        for _ in 0..<2 {
            let registered = ConductorTestKit.Latch()
            readers.append(Task { await read(owner, registered: registered) })
            await registered.wait()
        }
        let first = owner.state.withLock { $0.settle("completed") }
        let second = owner.state.withLock { $0.settle("cancelled") }
        #expect(first?.count == 2)
        #expect(second == nil, "a later settle changes nothing and lets nobody go")
        for waiter in first ?? [] { waiter.resume(returning: ()) }
        for reader in readers { #expect(await reader.value == "completed") }
    }

    @Test func aWaiterCancelledWhileWaitingIsTakenOutAndTheOthersWait() async {
        let owner = Owner()
        let cancelledRegistered = ConductorTestKit.Latch()
        let cancelled = Task { await read(owner, registered: cancelledRegistered) }
        await cancelledRegistered.wait()
        let stayingRegistered = ConductorTestKit.Latch()
        let staying = Task { await read(owner, registered: stayingRegistered) }
        await stayingRegistered.wait()
        cancelled.cancel()
        #expect(await cancelled.value == nil)
        let waiters = owner.state.withLock { $0.settle("completed") } ?? []
        #expect(waiters.count == 1, "only the waiter still waiting is let go")
        for waiter in waiters { waiter.resume(returning: ()) }
        #expect(await staying.value == "completed")
    }

    @Test func aSettledOutcomeAnswersAtOnce() async {
        let owner = Owner()
        _ = owner.state.withLock { $0.settle("completed") }
        #expect(await read(owner, registered: ConductorTestKit.Latch()) == "completed")
        #expect(await owner.state.wait(for: \.self) == "completed")
    }

    // MARK: - OnceCell

    @Test func aCellAnswersACancelledTaskWithNilAndStaysOpen() async {
        let cell = OnceCell<Int>()
        let value = await Task {
            withUnsafeCurrentTask { task in task?.cancel() }
            return await cell.wait()
        }.value
        #expect(value == nil)
        #expect(cell.settle(1))
        #expect(!cell.settle(2))
        #expect(await cell.wait() == 1)
    }

    @Test func waitingIgnoringCancellationGetsTheValue() async {
        let cell = OnceCell<Int>()
        let waiter = Task {
            withUnsafeCurrentTask { task in task?.cancel() }
            return await cell.waitIgnoringCancellation()
        }
        cell.settle(3)
        #expect(await waiter.value == 3)
    }
}
