import Testing

@testable import Conductor

/// The scheduler's decisions, without any concurrency: payloads are strings.
@Suite struct SchedulerStateMachineTests {
    typealias Machine = SchedulerStateMachine<String>

    @Test func startsAtOnceWithinTheLimitAndQueuesBeyondIt() {
        var machine = Machine(limit: 2, agingThreshold: 100)
        #expect(machine.submit(id: 0, priority: .default, payload: "a") == .start)
        #expect(machine.submit(id: 1, priority: .default, payload: "b") == .start)
        #expect(machine.submit(id: 2, priority: .default, payload: "c") == .enqueued)
        #expect(machine.finish(unique: false) == ["c"])
        #expect(machine.finish(unique: false) == [])
        #expect(machine.finish(unique: false) == [])
        #expect(machine.isIdle)
    }

    @Test func higherPrioritiesGoFirstAndFIFOWithinAPriority() {
        var machine = Machine(limit: 1, agingThreshold: 100)
        #expect(machine.submit(id: 0, priority: .low, payload: "running") == .start)
        let queued: [(String, Machine.Priority)] = [
            ("low1", .low), ("default1", .default), ("high1", .high), ("low2", .low), ("high2", .high),
            ("default2", .default),
        ]
        for (index, (name, priority)) in queued.enumerated() {
            #expect(machine.submit(id: UInt64(index + 1), priority: priority, payload: name) == .enqueued)
        }
        var order: [String] = []
        while !machine.isIdle { order += machine.finish(unique: false) }
        #expect(order == ["high1", "high2", "default1", "default2", "low1", "low2"])
    }

    @Test func agingLetsALowEntryOvertakeAStreamOfHighOnes() {
        var machine = Machine(limit: 1, agingThreshold: 3)
        #expect(machine.submit(id: 0, priority: .high, payload: "running") == .start)
        #expect(machine.submit(id: 1, priority: .low, payload: "low") == .enqueued)
        var nextID: UInt64 = 2
        var order: [String] = []
        for round in 0..<6 {
            #expect(machine.submit(id: nextID, priority: .high, payload: "high\(round)") == .enqueued)
            nextID += 1
            order += machine.finish(unique: false)
        }
        // The low entry waited through three starts, then went next.
        #expect(order.prefix(4) == ["high0", "high1", "high2", "low"])
    }

    @Test func uniqueWaitsForRunningWorkThenRunsAloneAndHoldsBackLaterWork() {
        var machine = Machine(limit: 4, agingThreshold: 100)
        #expect(machine.submit(id: 0, priority: .default, payload: "a") == .start)
        #expect(machine.submit(id: 1, priority: .default, payload: "b") == .start)
        #expect(machine.submit(id: 2, priority: .unique, payload: "refresh") == .enqueued)
        // A barrier is queued: nothing may start, even with free slots.
        #expect(machine.submit(id: 3, priority: .high, payload: "c") == .enqueued)
        #expect(machine.startImmediately(.high) == false)
        #expect(machine.finish(unique: false) == [])
        #expect(machine.finish(unique: false) == ["refresh"])
        #expect(machine.uniqueRunning)
        #expect(machine.submit(id: 4, priority: .unique, payload: "refresh2") == .enqueued)
        // The second unique runs before the normal work, and alone.
        #expect(machine.finish(unique: true) == ["refresh2"])
        #expect(machine.finish(unique: true) == ["c"])
        #expect(machine.finish(unique: false) == [])
        #expect(machine.isIdle)
    }

    @Test func uniqueIsNotBlockedByAFullConcurrencyLimitOfQueuedWork() {
        var machine = Machine(limit: 1, agingThreshold: 100)
        #expect(machine.submit(id: 0, priority: .default, payload: "running") == .start)
        for id in 1...10 {
            #expect(machine.submit(id: UInt64(id), priority: .high, payload: "queued\(id)") == .enqueued)
        }
        #expect(machine.submit(id: 11, priority: .unique, payload: "refresh") == .enqueued)
        #expect(machine.finish(unique: false) == ["refresh"])
        #expect(machine.finish(unique: true) == ["queued1"])
    }

    @Test func uniqueStartsImmediatelyWhenNothingRuns() {
        var machine = Machine(limit: 1, agingThreshold: 100)
        #expect(machine.startImmediately(.unique) == true)
        #expect(machine.startImmediately(.unique) == false)
        #expect(machine.startImmediately(.default) == false)
    }

    @Test func cancellingAQueuedEntryRemovesItAndReleasesABarrier() {
        var machine = Machine(limit: 2, agingThreshold: 100)
        #expect(machine.submit(id: 0, priority: .default, payload: "a") == .start)
        #expect(machine.submit(id: 1, priority: .unique, payload: "refresh") == .enqueued)
        #expect(machine.submit(id: 2, priority: .default, payload: "b") == .enqueued)
        let removed = machine.cancel(id: 1)
        #expect(removed?.cancelled == "refresh")
        // With the barrier gone, "b" fits in the free slot.
        #expect(removed?.started == ["b"])
        #expect(machine.cancel(id: 1) == nil)
        #expect(machine.cancel(id: 2) == nil)
    }

    @Test func cancelledEntriesAreSkipped() {
        var machine = Machine(limit: 1, agingThreshold: 100)
        #expect(machine.submit(id: 0, priority: .default, payload: "a") == .start)
        for id in 1...3 { _ = machine.submit(id: UInt64(id), priority: .default, payload: "q\(id)") }
        #expect(machine.cancel(id: 1)?.cancelled == "q1")
        #expect(machine.cancel(id: 2)?.cancelled == "q2")
        #expect(machine.finish(unique: false) == ["q3"])
        #expect(machine.queuedCount == 0)
    }

    @Test func shutdownDropsEverythingQueuedOnceAndRejectsLaterWork() {
        var machine = Machine(limit: 1, agingThreshold: 100)
        #expect(machine.submit(id: 0, priority: .default, payload: "running") == .start)
        _ = machine.submit(id: 1, priority: .low, payload: "low")
        _ = machine.submit(id: 2, priority: .unique, payload: "refresh")
        _ = machine.submit(id: 3, priority: .high, payload: "high")
        #expect(machine.shutdown() == ["refresh", "high", "low"])
        #expect(machine.shutdown() == [])
        #expect(machine.submit(id: 4, priority: .high, payload: "late") == .rejected)
        #expect(machine.startImmediately(.high) == nil)
        #expect(machine.finish(unique: false) == [])
        #expect(machine.isIdle)
    }
}
