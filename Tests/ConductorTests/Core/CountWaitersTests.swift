import Conductor
import ConductorTestKit
import Testing

/// `CountWaiters` and `Lock.wait(untilCountOf:…)`: the waiters behind every "suspend until at
/// least N" test hook. A waiter goes exactly when its count is met or its task is cancelled,
/// whichever comes first, and a cancelled waiter leaves nothing behind.
@Suite(.timeLimit(.minutes(1)))
struct CountWaitersTests {
    /// A hook's owner: a count per key and the waiters on it, under one lock.
    private final class Owner: Sendable {
        struct State {
            var counts: [String: Int] = [:]
            var waiters = CountWaiters<String>()
            var total = 0
            var totalWaiters = CountWaiters<Void>()

            var isIdle: Bool { waiters.isEmpty && totalWaiters.isEmpty }
        }

        let state = Lock(State())

        /// Registers a waiter from a task of its own and returns once it is registered; the
        /// task ends when the waiter's continuation is resumed.
        func register(id: UInt64, threshold: Int, key: String) async -> Task<Void, Never> {
            let registered = ConductorTestKit.Latch()
            let task = Task {
                await withCheckedContinuation { continuation in
                    state.withLock {
                        $0.waiters.register(id: id, threshold: threshold, key: key, continuation: continuation)
                    }
                    registered.open()
                }
            }
            await registered.wait()
            return task
        }

        func waitForTotal(_ threshold: Int) async {
            await state.wait(untilCountOf: { $0.total }, reaches: threshold, waiters: \.totalWaiters)
        }

        /// Raises the total and resumes, outside the lock, the waiters it satisfies.
        func add(_ amount: Int) {
            let ready = state.withLock { state in
                state.total += amount
                return state.totalWaiters.takeSatisfied(by: state.total)
            }
            for waiter in ready { waiter.resume() }
        }

        /// Suspends until a task waits on the total: the wait under test has registered.
        func totalWaiterRegistered() async {
            while state.withLock({ $0.totalWaiters.isEmpty }) { await Task.yield() }
        }
    }

    @Test func idsAreDistinct() {
        var waiters = CountWaiters<Void>()
        let ids = (0..<100).map { _ in waiters.makeID() }
        #expect(Set(ids).count == ids.count)
        #expect(waiters.isEmpty)
    }

    @Test func takesOnlyTheWaitersWhoseKeysCountMeetsTheirThreshold() async {
        let owner = Owner()
        let metA = await owner.register(id: 0, threshold: 2, key: "a")
        let unmetA = await owner.register(id: 1, threshold: 3, key: "a")
        let unmetB = await owner.register(id: 2, threshold: 1, key: "b")
        let metB = await owner.register(id: 3, threshold: 0, key: "b")

        let ready = owner.state.withLock { state in
            state.counts = ["a": 2, "b": 0]
            return state.waiters.takeSatisfied { [counts = state.counts] in counts[$0, default: 0] }
        }
        #expect(ready.count == 2)
        for waiter in ready { waiter.resume() }
        #expect(await awaitAll([metA, metB]))

        // The unmet ones are still there, and each goes once.
        let left = owner.state.withLock { state in [state.waiters.remove(id: 1), state.waiters.remove(id: 2)] }
        #expect(left.allSatisfy { $0 != nil })
        #expect(owner.state.withLock { $0.waiters.remove(id: 1) } == nil)
        #expect(owner.state.withLock { $0.waiters.isEmpty })
        for waiter in left { waiter?.resume() }
        #expect(await awaitAll([unmetA, unmetB]))
    }

    @Test func takingFromNoWaitersNeverReadsTheCount() {
        var waiters = CountWaiters<Int>()
        let ready = waiters.takeSatisfied { _ in
            Issue.record("counted with no waiter")
            return 0
        }
        #expect(ready.isEmpty)
        #expect(waiters.remove(id: 7) == nil)
    }

    @Test func aWaitAlreadyMetReturnsAtOnceAndRegistersNothing() async {
        let owner = Owner()
        owner.add(3)
        await owner.waitForTotal(3)
        await owner.waitForTotal(0)
        #expect(owner.state.withLock { $0.isIdle })
    }

    @Test func aWaitReturnsOnceTheCountReachesItsThreshold() async {
        let owner = Owner()
        let waiter = Task { await owner.waitForTotal(2) }
        await owner.totalWaiterRegistered()
        owner.add(1)
        #expect(!owner.state.withLock { $0.totalWaiters.isEmpty }, "1 of 2 let it go")
        owner.add(1)
        #expect(await awaitAll([waiter]))
        #expect(owner.state.withLock { $0.isIdle })
    }

    /// The case a test's time limit hits: the task is suspended in the wait when it is cancelled.
    @Test func aRegisteredWaitReturnsWhenItsTaskIsCancelledAndLeavesNoWaiter() async {
        let owner = Owner()
        let waiter = Task { await owner.waitForTotal(1) }
        await owner.totalWaiterRegistered()
        waiter.cancel()
        #expect(await awaitAll([waiter]))
        #expect(owner.state.withLock { $0.isIdle })
        owner.add(1)  // nothing left to resume twice
    }

    /// The other order: the task is cancelled before it starts waiting, so the cancellation
    /// handler finds nothing and the wait must see the flag instead.
    @Test func aWaitStartedByACancelledTaskReturnsAtOnce() async {
        let owner = Owner()
        let go = ConductorTestKit.Latch()
        let waiter = Task {
            await go.wait()
            await owner.waitForTotal(1)
        }
        waiter.cancel()
        go.open()
        #expect(await awaitAll([waiter]))
        #expect(owner.state.withLock { $0.isIdle })
    }
}
