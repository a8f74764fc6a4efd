import ConductorTestKit
import Testing

@testable import ConductorAssembly
@testable import ConductorCore
@testable import ConductorGate
@testable import ConductorGraph
@testable import ConductorHarmonizer
@testable import ConductorLaunch
@testable import ConductorReports

/// `WaiterSet` and `Lock.suspend`: a waiter registers under the lock unless its task is
/// already cancelled, is resumed once by a transition or by its cancellation, never both, and
/// a cancelled waiter leaves nothing behind.
@Suite(.timeLimit(.minutes(1)))
struct WaiterSetTests {
    private final class Owner: Sendable {
        struct State {
            var value: Int?
            var readers = WaiterSet<Int>()
            var decisions = 0
        }

        let state = Lock(State())

        /// Waits for the value; `registered` opens once this reader is in the set.
        func read(registered: ConductorTestKit.Latch? = nil) async -> Int {
            await state.suspend(
                { (state: inout State, waiter: WaiterSet<Int>.Waiter) -> SuspensionDecision<Int, Bool> in
                    state.decisions += 1
                    if let value = state.value { return .resume(value, false) }
                    state.readers.insert(waiter)
                    return .wait(true)
                },
                cancelledNow: { _ in (-1, false) },
                perform: { waits in if waits { registered?.open() } },
                cancelled: { @Sendable state, id in
                    guard let waiter = state.readers.remove(id) else { return nil }
                    return { waiter.resume(returning: -1) }
                })
        }

        func publish(_ value: Int) {
            let readers = state.withLock { state in
                state.value = value
                return state.readers.removeAll()
            }
            for reader in readers { reader.resume(returning: value) }
        }
    }

    @Test func aTransitionThatAnswersAtOnceRegistersNothing() async {
        let owner = Owner()
        owner.publish(7)
        #expect(await owner.read() == 7)
        #expect(owner.state.withLock { $0.readers.isEmpty })
    }

    @Test func aRegisteredWaiterIsResumedByTheTransitionThatLetsItGo() async {
        let owner = Owner()
        let registered = ConductorTestKit.Latch()
        let reader = Task { await owner.read(registered: registered) }
        await registered.wait()
        #expect(owner.state.withLock { $0.readers.count } == 1)
        owner.publish(3)
        #expect(await reader.value == 3)
        #expect(owner.state.withLock { $0.readers.isEmpty })
    }

    /// Cancelled before it could register: the decision never runs and nothing is left.
    @Test func aTaskCancelledBeforeRegisteringNeverRegisters() async {
        let owner = Owner()
        let value = await Task {
            withUnsafeCurrentTask { task in task?.cancel() }
            return await owner.read()
        }.value
        #expect(value == -1)
        #expect(owner.state.withLock { $0.decisions } == 0)
        #expect(owner.state.withLock { $0.readers.isEmpty })
    }

    /// Cancelled after it registered: the handler takes it out and resumes it; a later
    /// transition finds nobody to resume twice.
    @Test func aTaskCancelledAfterRegisteringIsTakenOutOnce() async {
        let owner = Owner()
        let registered = ConductorTestKit.Latch()
        let reader = Task { await owner.read(registered: registered) }
        await registered.wait()
        reader.cancel()
        #expect(await reader.value == -1)
        #expect(owner.state.withLock { $0.readers.isEmpty })
        owner.publish(5)
    }

    @Test func removeAllWhereKeepsTheOthersInOrder() async {
        let owner = Owner()
        var readers: [Task<Int, Never>] = []
        for _ in 0..<3 {
            let registered = ConductorTestKit.Latch()
            readers.append(Task { await owner.read(registered: registered) })
            await registered.wait()
        }
        let taken = owner.state.withLock { state in
            var index = 0
            return state.readers.removeAll { _ in
                defer { index += 1 }
                return index != 1
            }
        }
        #expect(taken.count == 2)
        for waiter in taken { waiter.resume(returning: 1) }
        #expect(owner.state.withLock { $0.readers.count } == 1)
        owner.publish(2)
        var values: [Int] = []
        for reader in readers { values.append(await reader.value) }
        #expect(values == [1, 2, 1])
    }
}
