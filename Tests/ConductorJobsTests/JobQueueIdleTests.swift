import ConductorCore
import ConductorTestKit
import Foundation
import Testing

@testable import ConductorJobs

/// `whenIdle()`: it returns once nothing runs and nothing can be claimed now, and not before.
/// A wrong answer either returns while a job still runs (caught by the job's state read right
/// after it returns) or never returns (caught by the time limit).
@Suite(.timeLimit(.minutes(1)))
struct JobQueueIdleTests {
    let harness = JobHarness()

    /// A task that calls `whenIdle()` and then `then`, returned once the call waits (or has
    /// returned too early, which the test's expectations then catch).
    private func idleWaiter<Value: Sendable>(
        _ queue: JobQueue, then: @escaping @Sendable () throws -> Value
    ) async -> Task<Value, any Error> {
        let returned = Lock(false)
        let task = Task {
            defer { returned.withLock { $0 = true } }
            try await queue.whenIdle()
            return try then()
        }
        while queue.idleWaiterCount == 0, !returned.withLock({ $0 }), !Task.isCancelled { await Task.yield() }
        return task
    }

    @Test func anEmptyStartedQueueIsIdleAtOnce() async throws {
        let queue = try harness.queue()
        queue.register(Echo.self) { _, _ in }
        try await queue.start()
        try await queue.whenIdle()
        try await queue.whenIdle()
        #expect(queue.idleWaiterCount == 0)
        await queue.shutdown()
    }

    @Test func jobsDueAtStartRunBeforeTheQueueIsIdle() async throws {
        let queue = try harness.queue(limit: 1)
        queue.register(Echo.self) { _, _ in }
        var ids: [JobID] = []
        for value in 0..<3 { ids.append(try await queue.enqueue(Echo.self, .init(value: value))) }
        try await queue.start()
        try await queue.whenIdle()
        for id in ids { #expect(try queue.job(id)?.state == .succeeded) }
        await queue.shutdown()
    }

    @Test func itWaitsForARunningJob() async throws {
        let queue = try harness.queue()
        let started = Latch()
        let release = Latch()
        queue.register(Echo.self) { _, _ in
            started.open()
            await release.wait()
        }
        try await queue.start()
        let id = try await queue.enqueue(Echo.self, .init(value: 1))
        await started.wait()
        let waiter = await idleWaiter(queue) { try queue.job(id)?.state }
        #expect(try queue.job(id)?.state == .running)
        release.open()
        #expect(try await waiter.value == .succeeded)
        await queue.shutdown()
    }

    @Test func jobsThatCannotBeClaimedNowDoNotKeepItWaiting() async throws {
        let queue = try harness.queue()
        let reachable = Lock(false)
        queue.register(Echo.self) { _, _ in }
        queue.register(constraint: JobConstraint(name: "network") { reachable.withLock { $0 } })
        let later = try await queue.enqueue(
            Echo.self, .init(value: 1), options: JobOptions(notBefore: harness.now + 10))
        let chained = try await queue.enqueue(Echo.self, .init(value: 2), options: JobOptions(after: [later]))
        let held = try await queue.enqueue(Echo.self, .init(value: 3), options: JobOptions(constraints: ["network"]))
        let unknown = try await queue.enqueue(Ghost.self, .init())
        let due = try await queue.enqueue(Echo.self, .init(value: 4))
        try await queue.start()
        try await queue.whenIdle()
        #expect(try queue.job(due)?.state == .succeeded)
        for id in [later, chained, held, unknown] { #expect(try queue.job(id)?.state == .pending) }

        // The constraint now holds: the next call waits for the job it lets through.
        reachable.withLock { $0 = true }
        queue.constraintsChanged()
        try await queue.whenIdle()
        #expect(try queue.job(held)?.state == .succeeded)
        await queue.shutdown()
    }

    @Test func cancellingTheWaiterThrowsAndLeavesTheJobRunning() async throws {
        let queue = try harness.queue()
        let started = Latch()
        let release = Latch()
        queue.register(Echo.self) { _, _ in
            started.open()
            await release.wait()
        }
        try await queue.start()
        let id = try await queue.enqueue(Echo.self, .init(value: 1))
        await started.wait()
        let waiter = await idleWaiter(queue) {}
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        #expect(queue.idleWaiterCount == 0)
        #expect(try queue.job(id)?.state == .running)

        // A task cancelled before it calls does not wait either.
        let cancelledFirst = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await queue.whenIdle()
        }
        await #expect(throws: CancellationError.self) { try await cancelledFirst.value }
        release.open()
        #expect(try await queue.ended(id).state == .succeeded)
        await queue.shutdown()
    }

    @Test func itThrowsBeforeStartAndOnceShutDown() async throws {
        let queue = try harness.queue()
        let started = Latch()
        queue.register(Echo.self) { _, _ in
            started.open()
            // Cancelled by the shutdown below.
            try await Task.sleep(for: .seconds(3600), clock: harness.clock)
        }
        await #expect(throws: JobQueueError.notStarted("wait for the job queue to be idle")) {
            try await queue.whenIdle()
        }
        try await queue.start()
        try await queue.enqueue(Echo.self, .init(value: 1))
        await started.wait()
        let waiter = await idleWaiter(queue) {}
        await queue.shutdown()
        let shutDown = JobQueueError.shutDown("wait for the job queue to be idle")
        await #expect(throws: shutDown) { try await waiter.value }
        await #expect(throws: shutDown) { try await queue.whenIdle() }
        #expect(shutDown.message == "cannot wait for the job queue to be idle: the job queue has been shut down")
    }
}

/// `runUntilIdle()`, the platform-neutral half of the BackgroundTasks hook `run(in:)`.
@Suite(.timeLimit(.minutes(1)))
struct JobQueueBackgroundWindowTests {
    let harness = JobHarness()

    @Test func itStartsTheQueueRunsWhatIsDueAndLeavesItRunning() async throws {
        let queue = try harness.queue()
        queue.register(Echo.self) { _, _ in }
        let id = try await queue.enqueue(Echo.self, .init(value: 1))
        #expect(await queue.runUntilIdle())
        #expect(try queue.job(id)?.state == .succeeded)
        // Still running: a second window on the same queue waits on it as it is.
        let next = try await queue.enqueue(Echo.self, .init(value: 2))
        #expect(await queue.runUntilIdle())
        #expect(try queue.job(next)?.state == .succeeded)
        await queue.shutdown()
    }

    @Test func theWindowEndingShutsTheQueueDownAndLeavesTheJobRunningInTheFile() async throws {
        let queue = try harness.queue()
        let started = Latch()
        queue.register(Echo.self) { _, _ in
            started.open()
            try await Task.sleep(for: .seconds(3600), clock: harness.clock)
        }
        let id = try await queue.enqueue(Echo.self, .init(value: 1))
        let window = Task { await queue.runUntilIdle() }
        await started.wait()
        window.cancel()  // what the task's expiration handler does
        #expect(await window.value == false)
        await #expect(throws: JobQueueError.shutDown("wait for the job queue to be idle")) {
            try await queue.whenIdle()
        }
        #expect(try queue.job(id)?.state == .running)

        // The next window's queue runs it again.
        let next = try harness.queue()
        next.register(Echo.self) { _, _ in }
        #expect(await next.runUntilIdle())
        let record = try #require(try next.job(id))
        #expect(record.state == .succeeded && record.deliveries == 2)
        await next.shutdown()
    }
}
