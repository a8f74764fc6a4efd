import ConductorCore
import ConductorTestKit
import Foundation
import Testing

@testable import ConductorJobs

/// Each option of ``JobOptions``, driven by the harness's manual clock and the wall clock that
/// moves with it: no sleeps.
struct JobOptionsTests {
    let harness = JobHarness()

    private func startedQueue(limit: Int = 4, _ calls: Calls) async throws -> JobQueue {
        let queue = try harness.queue(limit: limit)
        queue.register(Echo.self) { _, context in calls.record(context) }
        try await queue.start()
        return queue
    }

    // MARK: - Unique names and tags

    @Test func keepExistingReturnsTheJobThatHoldsTheName() async throws {
        let queue = try harness.queue()
        let first = try await queue.enqueue(
            Echo.self, .init(value: 1), options: JobOptions(unique: .keepExisting("sync")))
        let second = try await queue.enqueue(
            Echo.self, .init(value: 2), options: JobOptions(unique: .keepExisting("sync")))
        #expect(second == first)
        #expect(try queue.jobs().count == 1)
    }

    @Test func replaceExistingCancelsThePendingJob() async throws {
        let queue = try harness.queue()
        let first = try await queue.enqueue(
            Echo.self, .init(value: 1), options: JobOptions(unique: .replaceExisting("draft")))
        let second = try await queue.enqueue(
            Echo.self, .init(value: 2), options: JobOptions(unique: .replaceExisting("draft")))
        #expect(second != first)
        let replaced = try #require(try queue.job(first))
        #expect(replaced.state == .cancelled && replaced.lastError?.code == .cancelled)
        #expect(replaced.lastError?.message == "job \(first) (echo) was replaced by a new job named 'draft'")
        #expect(try queue.job(second)?.state == .pending)
    }

    @Test func cancelByTagEndsEveryTaggedJob() async throws {
        let queue = try harness.queue()
        let a = try await queue.enqueue(Echo.self, .init(value: 1), options: JobOptions(tags: ["uploads"]))
        let b = try await queue.enqueue(Echo.self, .init(value: 2), options: JobOptions(tags: ["uploads", "big"]))
        let c = try await queue.enqueue(Echo.self, .init(value: 3), options: JobOptions(tags: ["orders"]))
        #expect(try await queue.cancel(tag: "uploads") == 2)
        #expect(try queue.jobs(in: .cancelled, tag: "uploads").map(\.id) == [a, b])
        #expect(try queue.job(b)?.tags == ["uploads", "big"])
        #expect(try queue.jobs(in: .pending).map(\.id) == [c])
        #expect(try await queue.cancel(tag: "uploads") == 0)
    }

    // MARK: - Time

    @Test func aJobIsNotClaimedBeforeNotBefore() async throws {
        let calls = Calls()
        let queue = try await startedQueue(calls)
        let id = try await queue.enqueue(Echo.self, .init(value: 1), options: JobOptions(notBefore: harness.now + 10))
        await harness.clock.sleepers(atLeast: 1)  // the dispatcher sleeps until then
        #expect(try queue.job(id)?.state == .pending)
        harness.clock.advance(by: .seconds(10))
        let record = try await queue.ended(id)
        #expect(record.state == .succeeded && record.startedAt == JobHarness.origin + 10)
        await queue.shutdown()
    }

    @Test func aJobNotStartedByExpiresAtEndsExpired() async throws {
        let calls = Calls()
        let queue = try await startedQueue(calls)
        let id = try await queue.enqueue(
            Echo.self, .init(value: 1), options: JobOptions(notBefore: harness.now + 10, expiresAt: harness.now + 5))
        await harness.clock.sleepers(atLeast: 1)
        harness.clock.advance(by: .seconds(5))
        let record = try await queue.ended(id)
        #expect(record.state == .expired && record.lastError?.code == .expired)
        #expect(record.lastError?.message == "job \(id) (echo) expired before it started")
        #expect(calls.all.isEmpty)
        await queue.shutdown()
    }

    // MARK: - Order

    @Test func dueJobsRunByPriorityUnderALimitOfOne() async throws {
        let queue = try harness.queue(limit: 1)
        let low = try await queue.enqueue(Echo.self, .init(value: 1), options: JobOptions(priority: .low))
        let high = try await queue.enqueue(Echo.self, .init(value: 2), options: JobOptions(priority: .high))
        let medium = try await queue.enqueue(Echo.self, .init(value: 3), options: JobOptions(priority: .medium))
        let calls = Calls()
        queue.register(Echo.self) { _, context in calls.record(context) }
        try await queue.start()
        _ = try await queue.ended(low)
        #expect(calls.all.map(\.id) == [high, medium, low])
        await queue.shutdown()
    }

    @Test func aChainedJobRunsAfterTheOneBeforeIt() async throws {
        let calls = Calls()
        let queue = try harness.queue()
        let a = try await queue.enqueue(Echo.self, .init(value: 1), options: JobOptions(notBefore: harness.now + 1))
        let b = try await queue.enqueue(Echo.self, .init(value: 2), options: JobOptions(after: [a]))
        queue.register(Echo.self) { _, context in calls.record(context) }
        try await queue.start()
        await harness.clock.sleepers(atLeast: 1)
        #expect(try queue.job(b)?.state == .pending)  // due, but a has not run
        harness.clock.advance(by: .seconds(1))
        #expect(try await queue.ended(b).state == .succeeded)
        #expect(calls.all.map(\.id) == [a, b])
        #expect(try queue.job(b)?.after == [a])
        await queue.shutdown()
    }

    @Test func aFailedJobCancelsTheOneAfterItInTheSameTransaction() async throws {
        let queue = try harness.queue()
        queue.register(Echo.self) { _, context in throw Boom(attempt: context.attempt) }
        let a = try await queue.enqueue(Echo.self, .init(value: 1), options: JobOptions(retry: .never))
        let b = try await queue.enqueue(Echo.self, .init(value: 2), options: JobOptions(after: [a]))
        try await queue.start()
        let first = try await queue.ended(a)
        let second = try await queue.ended(b)
        #expect(first.state == .failed && second.state == .cancelled)
        #expect(second.lastError?.code == .dependencyFailed)
        #expect(
            second.lastError?.message
                == "job \(b) (echo) was cancelled: job \(a) (echo), which it runs after, ended failed")
        #expect(second.endedAt == first.endedAt && second.deliveries == 0)
        await queue.shutdown()
    }

    // MARK: - Timeouts

    @Test func aHandlerThatNeverReturnsTimesOutAndTheQueueGoesOn() async throws {
        let queue = try harness.queue(limit: 1)
        let calls = Calls()
        queue.register(Other.self) { _, _ in
            await withCheckedContinuation { (_: CheckedContinuation<Void, Never>) in }  // never returns
        }
        queue.register(Echo.self) { _, context in calls.record(context) }
        try await queue.start()
        let stuck = try await queue.enqueue(
            Other.self, .init(text: "stuck"), options: JobOptions(retry: .never, timeout: .seconds(5)))
        let next = try await queue.enqueue(Echo.self, .init(value: 1))
        await harness.clock.sleepers(atLeast: 1, for: .taskTimeout)
        #expect(try queue.job(next)?.state == .pending)  // the limit of 1 is held by the stuck one
        harness.clock.advance(by: .seconds(5))
        let record = try await queue.ended(stuck)
        #expect(record.state == .failed && record.lastError?.code == .timedOut)
        #expect(record.lastError?.message == "job \(stuck) (other) timed out on attempt 1")
        #expect(try await queue.ended(next).state == .succeeded)
        await queue.shutdown()
    }

    // MARK: - Periodic jobs

    @Test func aPeriodicJobRunsEveryPeriodWithoutDrift() async throws {
        let calls = Calls()
        let queue = try await startedQueue(calls)
        let first = try await queue.enqueuePeriodic(Echo.self, .init(value: 1), every: .seconds(60), name: "tick")
        #expect(try await queue.enqueuePeriodic(Echo.self, .init(value: 1), every: .seconds(60), name: "tick") == first)
        #expect(try await queue.ended(first).state == .succeeded)
        let second = try #require(try queue.jobs(in: .pending).first)
        #expect(second.notBefore == JobHarness.origin + 60 && second.uniqueName == "tick")
        await harness.clock.sleepers(atLeast: 1)
        harness.clock.advance(by: .seconds(60))
        #expect(try await queue.ended(second.id).state == .succeeded)
        #expect(try queue.jobs(in: .pending).first?.notBefore == JobHarness.origin + 120)
        #expect(calls.all.count == 2)
        // Cancelling an occurrence ends the series.
        let third = try #require(try queue.jobs(in: .pending).first)
        #expect(try await queue.cancel(third.id))
        #expect(try queue.jobs(in: .pending).isEmpty)
        await queue.shutdown()
    }

    // MARK: - Constraints

    @Test func aJobWaitsForItsConstraintUntilItHoldsAndTheQueueIsTold() async throws {
        let calls = Calls()
        let reachable = Lock(false)
        let queue = try harness.queue()
        queue.register(Echo.self) { _, context in calls.record(context) }
        queue.register(constraint: JobConstraint(name: "network") { reachable.withLock { $0 } })
        try await queue.start()
        let held = try await queue.enqueue(Echo.self, .init(value: 1), options: JobOptions(constraints: ["network"]))
        let free = try await queue.enqueue(Echo.self, .init(value: 2))
        #expect(try await queue.ended(free).state == .succeeded)  // a claim pass has seen `held`
        #expect(try queue.job(held)?.state == .pending)
        reachable.withLock { $0 = true }
        queue.constraintsChanged()
        #expect(try await queue.ended(held).state == .succeeded)
        #expect(calls.all.map(\.id) == [free, held])
        await queue.shutdown()
    }

    @Test func invalidOptionsAreRefusedBeforeAnythingIsStored() async throws {
        let queue = try harness.queue()
        let error = await #expect(throws: JobQueueError.self) {
            try await queue.enqueue(Echo.self, .init(value: 1), options: JobOptions(timeout: .seconds(-1)))
        }
        #expect(error?.code == .invalidOption)
        await #expect(throws: JobQueueError.self) {
            try await queue.enqueue(Echo.self, .init(value: 1), options: JobOptions(retry: .attempts(0)))
        }
        await #expect(throws: JobQueueError.self) {
            try await queue.enqueuePeriodic(Echo.self, .init(value: 1), every: .zero, name: "never")
        }
        #expect(try queue.jobs().isEmpty)
    }
}
