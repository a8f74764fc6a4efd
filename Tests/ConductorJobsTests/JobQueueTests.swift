import ConductorCore
import ConductorTestKit
import Foundation
import Testing

@testable import ConductorJobs

/// The queue's façade and dispatcher on a long-lived graph run, on a temporary file, with a
/// manual clock: nothing here sleeps.
struct JobQueueTests {
    let harness = JobHarness()

    // MARK: - Running

    @Test func aJobRunsOnceAndEndsSucceeded() async throws {
        let queue = try harness.queue()
        let calls = Calls()
        queue.register(Echo.self) { _, context in calls.record(context) }
        try await queue.start()
        let id = try await queue.enqueue(Echo.self, .init(value: 7))
        let record = try await queue.ended(id)
        #expect(record.state == .succeeded && record.attempts == 1 && record.deliveries == 1)
        #expect(record.lastError == nil && record.endedAt != nil)
        #expect(try record.payload(as: Echo.self) == .init(value: 7))
        #expect(calls.all.map(\.id) == [id])
        #expect(calls.all.first?.idempotencyKey == record.idempotencyKey)
        await queue.shutdown()
    }

    @Test func aFailingHandlerIsRetriedThenEndsFailedWithItsError() async throws {
        let queue = try harness.queue()
        let calls = Calls()
        queue.register(Echo.self) { _, context in
            calls.record(context)
            throw Boom(attempt: context.attempt)
        }
        try await queue.start()
        let id = try await queue.enqueue(
            Echo.self, .init(value: 1), options: JobOptions(retry: .attempts(3, backoff: .zero)))
        let record = try await queue.ended(id)
        #expect(record.state == .failed && record.attempts == 3)
        #expect(record.lastError?.code == .handlerFailed)
        #expect(record.lastError?.message == "job \(id) (echo) failed on attempt 3: Boom on attempt 3")
        #expect(calls.of(id).map(\.attempt) == [1, 2, 3])
        #expect(Set(calls.of(id).map(\.idempotencyKey)) == [record.idempotencyKey])
        await queue.shutdown()
    }

    @Test func aJobLeftRunningByACrashRunsAgainWithTheNextDeliveryAndTheSameKey() async throws {
        let crashed = try harness.queue()
        let id = try await crashed.enqueue(Echo.self, .init(value: 1))
        // What a process that died inside the handler leaves: claimed, one attempt started.
        let claim = try await crashed.store.write { db in
            try JobStore.claim(limit: 1, kinds: ["echo"], satisfied: [], now: JobHarness.origin, in: db)
        }
        #expect(claim.claimed.map(\.id) == [id])

        let queue = try harness.queue()
        let calls = Calls()
        queue.register(Echo.self) { _, context in calls.record(context) }
        let recovery = try await queue.start()
        #expect(recovery.requeued == [id])
        let record = try await queue.ended(id)
        #expect(record.state == .succeeded && record.deliveries == 2 && record.attempts == 2)
        let context = try #require(calls.of(id).first)
        #expect(context.delivery == 2 && context.attempt == 2)
        #expect(context.idempotencyKey == record.idempotencyKey)
        await queue.shutdown()
    }

    @Test func fiftyTasksEnqueueAtOnce() async throws {
        let queue = try harness.queue()
        let calls = Calls()
        queue.register(Echo.self) { _, context in calls.record(context) }
        try await queue.start()
        let ids = try await withThrowingTaskGroup(of: JobID.self) { group in
            for value in 0..<50 {
                group.addTask { try await queue.enqueue(Echo.self, .init(value: value)) }
            }
            return try await group.reduce(into: Set<JobID>()) { $0.insert($1) }
        }
        #expect(ids.count == 50)
        for id in ids { #expect(try await queue.ended(id).state == .succeeded) }
        #expect(Set(calls.all.map(\.id)) == ids && calls.all.count == 50)
        await queue.shutdown()
    }

    // MARK: - Faults in the file's contents

    @Test func anUnknownKindAtStartStaysPendingAndIsReported() async throws {
        let queue = try harness.queue()
        let ghost = try await queue.enqueue(Ghost.self, .init())
        queue.register(Echo.self) { _, _ in }
        let recovery = try await queue.start()
        #expect(recovery.unknownKinds == ["ghost": 1] && recovery.requeued.isEmpty)
        let echo = try await queue.enqueue(Echo.self, .init(value: 1))
        #expect(try await queue.ended(echo).state == .succeeded)
        let record = try #require(try queue.job(ghost))
        #expect(record.state == .pending && record.deliveries == 0)
        await queue.shutdown()
    }

    @Test func anUndecodablePayloadEndsFailedAndTheQueueGoesOn() async throws {
        let queue = try harness.queue()
        let old = try await queue.enqueue(Echo.self, .init(value: 1))
        let calls = Calls()
        queue.register(EchoV2.self) { _, context in calls.record(context) }
        queue.register(Other.self) { _, context in calls.record(context) }
        try await queue.start()
        let next = try await queue.enqueue(Other.self, .init(text: "after"))
        let record = try await queue.ended(old)
        #expect(record.state == .failed && record.lastError?.code == .payloadUndecodable)
        #expect(record.lastError?.message.hasPrefix("job \(old) (echo) has a payload that does not decode") == true)
        #expect(try record.payload(as: Echo.self) == .init(value: 1))  // still inspectable
        #expect(try await queue.ended(next).state == .succeeded)
        #expect(calls.all.map(\.id) == [next])
        await queue.shutdown()
    }

    // MARK: - Cancelling and shutting down

    @Test func cancellingARunningJobCancelsItsHandler() async throws {
        let queue = try harness.queue()
        let calls = Calls()
        let clock = harness.clock
        queue.register(Echo.self) { _, context in
            calls.record(context)
            try await clock.sleep(for: .seconds(3600))  // until cancelled: the clock never moves
        }
        try await queue.start()
        let id = try await queue.enqueue(Echo.self, .init(value: 1))
        _ = await calls.events.first()
        #expect(try await queue.cancel(id))
        let record = try await queue.ended(id)
        #expect(record.state == .cancelled && record.lastError?.code == .cancelled)
        #expect(try await !queue.cancel(id))
        await #expect(throws: JobQueueError.self) { try await queue.cancel(JobID(rawValue: 999)) }
        await queue.shutdown()
    }

    @Test func aHandlerThatReturnsNormallyAfterACancelEndsItsJobSucceeded() async throws {
        let queue = try harness.queue()
        let started = Latch()
        let cancelSeen = Latch()
        let release = Latch()
        queue.register(Echo.self) { _, _ in
            // The order is placed: the handler finishes its work although it is asked to stop.
            await withTaskCancellationHandler {
                started.open()
                await release.wait()
            } onCancel: {
                cancelSeen.open()
            }
        }
        try await queue.start()
        let id = try await queue.enqueue(Echo.self, .init(value: 1))
        await started.wait()
        let cancelling = Task { try await queue.cancel(id) }
        await cancelSeen.wait()
        release.open()
        #expect(try await cancelling.value)
        let record = try await queue.ended(id)
        #expect(record.state == .succeeded && record.lastError == nil)
        await queue.shutdown()
    }

    @Test func nothingStartsAfterShutdownAndARunningJobStaysRunning() async throws {
        let queue = try harness.queue(limit: 1)
        let calls = Calls()
        let clock = harness.clock
        queue.register(Echo.self) { _, context in
            calls.record(context)
            try await clock.sleep(for: .seconds(3600))
        }
        try await queue.start()
        let first = try await queue.enqueue(Echo.self, .init(value: 1))
        let second = try await queue.enqueue(Echo.self, .init(value: 2))
        _ = await calls.events.first()
        await queue.shutdown()
        let error = await #expect(throws: JobQueueError.self) { try await queue.enqueue(Echo.self, .init(value: 3)) }
        #expect(error?.code == .shutDown)
        await #expect(throws: JobQueueError.self) { try await queue.ended(second) }
        #expect(calls.all.map(\.id) == [first])
        #expect(try queue.job(first)?.state == .running)
        #expect(try queue.job(second)?.state == .pending)

        // The next start runs both: the interrupted one as its second delivery.
        let restarted = try harness.queue()
        let again = Calls()
        restarted.register(Echo.self) { _, context in again.record(context) }
        #expect(try await restarted.start().requeued == [first])
        #expect(try await restarted.ended(first).state == .succeeded)
        #expect(try await restarted.ended(second).state == .succeeded)
        #expect(again.of(first).map(\.delivery) == [2])
        await restarted.shutdown()
    }

    @Test func endedHonoursCancellation() async throws {
        let queue = try harness.queue()
        let id = try await queue.enqueue(Echo.self, .init(value: 1))  // never started: stays pending
        let waiter = Task { try await queue.ended(id) }
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
    }

    @Test func startTwiceAndDuplicateKindsAreRefused() async throws {
        let queue = try harness.queue()
        queue.register(Echo.self) { _, _ in }
        queue.register(EchoV2.self) { _, _ in }
        let duplicate = await #expect(throws: JobQueueError.self) { try await queue.start() }
        #expect(duplicate?.code == .duplicateKind && duplicate?.message == "job kind 'echo' is registered twice")
        let other = try harness.queue()
        try await other.start()
        let twice = await #expect(throws: JobQueueError.self) { try await other.start() }
        #expect(twice?.code == .alreadyStarted)
        await other.shutdown()
    }
}
