import Testing

@testable import ConductorCore
@testable import ConductorGraph

/// The shared limit's pure core, with no concurrency: priority order, first come first within
/// a priority, no barging, and a cancel that races a grant.
@Suite struct TaskLimitStateMachineTests {
    typealias Machine = TaskLimitStateMachine<Int, String>

    static func request(_ id: Int, rank: UInt8 = 21) -> Machine.Request {
        Machine.Request(id: id, rank: rank, payload: "r\(id)")
    }

    @Test func grantsAtOnceUpToCapacityThenQueues() {
        var limit = Machine(capacity: 2)
        #expect(limit.acquire(Self.request(1)) == "r1")
        #expect(limit.acquire(Self.request(2)) == "r2")
        #expect(limit.acquire(Self.request(3)) == nil)
        #expect(limit.inUse == 2)
        #expect(limit.waiting == 1)
        #expect(limit.release(1) == ["r3"])
        #expect(limit.inUse == 2)
        #expect(limit.release(2) == [])
        #expect(limit.inUse == 0)
    }

    @Test func higherPriorityFirstThenFirstCome() {
        var limit = Machine(capacity: 1)
        _ = limit.acquire(Self.request(0))
        _ = limit.acquire(Self.request(1, rank: 17))
        _ = limit.acquire(Self.request(2, rank: 21))
        _ = limit.acquire(Self.request(3, rank: 25))
        _ = limit.acquire(Self.request(4, rank: 21))
        _ = limit.acquire(Self.request(5, rank: 17))
        var order: [String] = []
        for _ in 0..<5 { order += limit.release(1) }
        #expect(order == ["r3", "r2", "r4", "r1", "r5"])
    }

    /// A request that finds a free place while others wait queues behind them: a place that
    /// comes free goes to the queue's head, never to whoever asks at that moment.
    @Test func noBargingPastAWaitingRequest() {
        var limit = Machine(capacity: 1)
        _ = limit.acquire(Self.request(1))
        #expect(limit.acquire(Self.request(2, rank: 9)) == nil)
        // The holder gives back and the waiting low-priority request is granted, even though a
        // high-priority one arrives next: it was not waiting when the place came free.
        #expect(limit.release(1) == ["r2"])
        #expect(limit.acquire(Self.request(3, rank: 25)) == nil)
        #expect(limit.release(1) == ["r3"])
    }

    @Test func aWaitingRequestCancelledIsNeverGranted() {
        var limit = Machine(capacity: 1)
        _ = limit.acquire(Self.request(1))
        _ = limit.acquire(Self.request(2))
        _ = limit.acquire(Self.request(3))
        #expect(limit.cancel(2) == .removedFromQueue)
        #expect(limit.waiting == 1)
        #expect(limit.release(1) == ["r3"])
    }

    /// The race of item 1: the place was granted (it is on its way to its run) when the run
    /// cancels. The limit says so, and counts the place as held until the run gives it back.
    @Test func aCancelAfterTheGrantFindsItGranted() {
        var limit = Machine(capacity: 1)
        _ = limit.acquire(Self.request(1))
        _ = limit.acquire(Self.request(2))
        #expect(limit.release(1) == ["r2"])
        #expect(limit.cancel(2) == .alreadyGranted)
        #expect(limit.inUse == 1)
        #expect(limit.release(1) == [])
        #expect(limit.inUse == 0)
    }

    @Test func releasingSeveralGrantsSeveralInOrder() {
        var limit = Machine(capacity: 3)
        for id in 0..<3 { _ = limit.acquire(Self.request(id)) }
        for id in 3..<7 { _ = limit.acquire(Self.request(id, rank: UInt8(10 + id))) }
        #expect(limit.release(2) == ["r6", "r5"])
        #expect(limit.waiting == 2)
    }
}
