import Conductor
import Synchronization
import Testing

/// The scheduler with real tasks: cancellation, shutdown, coalescing, workers, exclusivity.
@Suite struct PrioritySchedulerTests {
    /// Starts work that holds the scheduler's only slot until `open.yield()`, and returns once
    /// it holds it: only then can anything be queued behind it.
    static func holdTheOnlySlot(
        of scheduler: PriorityScheduler
    ) async -> (Task<Void, any Error>, AsyncStream<Void>.Continuation) {
        let (gate, open) = AsyncStream<Void>.makeStream()
        let (running, blockerRunning) = AsyncStream<Void>.makeStream()
        let blocker = Task {
            try await scheduler.run {
                blockerRunning.yield()
                for await _ in gate { break }
            }
        }
        for await _ in running { break }
        return (blocker, open)
    }

    @Test func aCancelledQueuedCallerReturnsAtOnceWithoutRunning() async throws {
        let scheduler = try PriorityScheduler(maxConcurrent: 1)
        let (blocker, open) = await Self.holdTheOnlySlot(of: scheduler)
        let ran = Locked(false)
        let queued = Task { try await scheduler.run { ran.withLock { $0 = true } } }
        await scheduler.queued(atLeast: 1)
        queued.cancel()
        await #expect(throws: CancellationError.self) { try await queued.value }
        open.yield()
        try await blocker.value
        #expect(ran.withLock { $0 } == false)
    }

    @Test func shutdownEndsQueuedCallersOnceAndRefusesNewWork() async throws {
        let scheduler = try PriorityScheduler(maxConcurrent: 1)
        let (blocker, open) = await Self.holdTheOnlySlot(of: scheduler)
        let queued = (0..<10).map { _ in Task { try await scheduler.run(priority: .high) {} } }
        await scheduler.queued(atLeast: 10)
        scheduler.shutdown()
        for task in queued {
            let error = await #expect(throws: SchedulerError.self) { try await task.value }
            #expect(error?.code == .shutDown)
        }
        #expect(throws: SchedulerError.self) { try scheduler.submit {} }
        open.yield()
        try await blocker.value
        try await scheduler.whenIdle()
    }

    /// Regression: the flight used to be released before every caller had joined it, so a
    /// late caller started a second execution now and then.
    @Test func fiftyCoalescedCallersShareOneExecution() async throws {
        let scheduler = try PriorityScheduler()
        let runs = Locked(0)
        let (gate, open) = AsyncStream<Void>.makeStream()
        let results = (0..<50).map { _ in
            Task {
                try await scheduler.run(coalescingKey: "avatar") {
                    runs.withLock { $0 += 1 }
                    for await _ in gate { break }
                    return 42
                }
            }
        }
        await scheduler.coalescedCallers(atLeast: 50)
        // One cancelled follower leaves; the others keep waiting.
        results[1].cancel()
        await #expect(throws: CancellationError.self) { try await results[1].value }
        open.yield()
        for (index, task) in results.enumerated() where index != 1 {
            #expect(try await task.value == 42)
        }
        #expect(runs.withLock { $0 } == 1)
    }

    @Test func cancellingEveryCoalescedCallerCancelsTheWork() async throws {
        let scheduler = try PriorityScheduler()
        let (started, markStarted) = AsyncStream<Void>.makeStream()
        let (finished, markFinished) = AsyncStream<Bool>.makeStream()
        let callers = (0..<3).map { _ in
            Task {
                try await scheduler.run(coalescingKey: 7) {
                    markStarted.yield()
                    let cancelled = (try? await Task.sleep(for: .seconds(3600))) == nil
                    markFinished.yield(cancelled)
                    return 0
                }
            }
        }
        for await _ in started { break }
        for caller in callers { caller.cancel() }
        for caller in callers { await #expect(throws: CancellationError.self) { try await caller.value } }
        var iterator = finished.makeAsyncIterator()
        #expect(await iterator.next() == true)
    }

    @Test func submittedJobsRunOnAtMostTheLimitOfWorkersAndUniqueRunsAlone() async throws {
        let scheduler = try PriorityScheduler(maxConcurrent: 8)
        struct Counters: Sendable {
            var running = 0
            var peak = 0
            var uniqueOverlaps = 0
            var done = 0
        }
        let counters = Locked(Counters())
        let priorities: [RequestPriority] = [.low, .default, .high, .default, .unique]
        for index in 0..<10_000 {
            let priority = priorities[index % priorities.count]
            try scheduler.submit(priority: priority) {
                counters.withLock { counters in
                    counters.running += 1
                    counters.peak = max(counters.peak, counters.running)
                    if priority == .unique && counters.running != 1 { counters.uniqueOverlaps += 1 }
                }
                await Task.yield()
                counters.withLock { counters in
                    counters.running -= 1
                    counters.done += 1
                }
            }
        }
        try await scheduler.whenIdle()
        let final = counters.withLock { $0 }
        #expect(final.done == 10_000)
        #expect(final.peak <= 8)
        #expect(final.uniqueOverlaps == 0)
    }
}

/// A mutex on the heap, so test closures can share it.
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Lock<Value>

    init(_ value: Value) { mutex = Lock(value) }

    func withLock<R: Sendable>(_ body: (inout sending Value) -> sending R) -> R { mutex.withLock(body) }
}
