import Conductor
import ConductorCore
import ConductorTestKit
import Foundation
import Testing

@testable import ConductorJobs

/// The queue's graph runs: a run takes ``JobQueueConfiguration/jobsPerGraphRun`` deliveries, then
/// a fresh one replaces it and the full one ends with its jobs, so a long-lived queue does not
/// keep a record of every job it ever ran.
@Suite(.timeLimit(.minutes(1))) struct JobGraphRunTests {
    let harness = JobHarness()

    private func queue(limit: Int, jobsPerGraphRun: Int) throws -> JobQueue {
        var configuration = harness.configuration(limit: limit)
        configuration.jobsPerGraphRun = jobsPerGraphRun
        return try JobQueue(path: harness.file.path, configuration: configuration)
    }

    @Test func aFullRunIsReplacedAndEndsWithItsJobs() async throws {
        // One job at a time: each claim pass takes one, so a run takes exactly three.
        let queue = try queue(limit: 1, jobsPerGraphRun: 3)
        queue.register(Echo.self) { _, _ in }
        try await queue.start()
        let first = try #require(queue.graphRun)
        var ids: [JobID] = []
        for value in 0..<7 { ids.append(try await queue.enqueue(Echo.self, .init(value: value))) }
        for id in ids { #expect(try await queue.ended(id).state == .succeeded) }

        // The first run was closed once full, and ended: its report has its three jobs.
        let current = try #require(queue.graphRun)
        try #require(current !== first)
        let report = try await first.report()
        #expect(report.tasks.count == 3)
        #expect(report.tasks.allSatisfy { $0.outcome.isSuccess })
        await queue.shutdown()
    }

    @Test func shutdownCancelsAJobStillRunningInAReplacedRun() async throws {
        let queue = try queue(limit: 2, jobsPerGraphRun: 1)
        let calls = Calls()
        let clock = harness.clock
        let cancelled = Lock(false)
        queue.register(Echo.self) { payload, context in
            calls.record(context)
            guard payload.value == 1 else { return }
            do {
                try await clock.sleep(for: .seconds(3600))  // until cancelled: the clock never moves
            } catch {
                cancelled.withLock { $0 = true }
                throw error
            }
        }
        let (first, blocked) = try await blockAJobInAFullRun(queue, calls: calls)

        await queue.shutdown()
        #expect(cancelled.withLock { $0 })
        #expect(try queue.job(blocked)?.state == .running)
        _ = try await first.report()
    }

    @Test func cancellingAJobInAReplacedRunRemovesItFromThatRun() async throws {
        let queue = try queue(limit: 2, jobsPerGraphRun: 1)
        let calls = Calls()
        let clock = harness.clock
        queue.register(Echo.self) { payload, context in
            calls.record(context)
            if payload.value == 1 { try await clock.sleep(for: .seconds(3600)) }
        }
        let (_, blocked) = try await blockAJobInAFullRun(queue, calls: calls)

        #expect(try await queue.cancel(blocked))
        let record = try await queue.ended(blocked)
        #expect(record.state == .cancelled && record.lastError?.code == .cancelled)
        await queue.shutdown()
    }

    /// Starts `queue` (one job per run), whose handler for value 1 blocks: that job holds the
    /// first run, and the next job's delivery goes to a fresh one. Returns the first run and the
    /// blocked job.
    private func blockAJobInAFullRun(_ queue: JobQueue, calls: Calls) async throws -> (GraphRun, JobID) {
        try await queue.start()
        let first = try #require(queue.graphRun)
        let blocked = try await queue.enqueue(Echo.self, .init(value: 1))
        _ = await calls.events.first()
        let next = try await queue.enqueue(Echo.self, .init(value: 2))
        #expect(try await queue.ended(next).state == .succeeded)
        try #require(queue.graphRun !== first)
        return (first, blocked)
    }

    @Test func fewerThanOneJobPerRunIsRefusedAtStart() async throws {
        let queue = try queue(limit: 1, jobsPerGraphRun: 0)
        queue.register(Echo.self) { _, _ in }
        let error = await #expect(throws: JobQueueError.self) { try await queue.start() }
        #expect(error?.code == .invalidOption)
        #expect(error?.message.contains("jobsPerGraphRun") == true)
    }
}
