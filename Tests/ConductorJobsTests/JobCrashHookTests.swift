import ConductorCore
import ConductorTestKit
import Foundation
import Testing

@testable import ConductorJobs

/// The crash hook a crash test's child process kills itself from: each named point is reached,
/// in order, with the job's id, and what the file holds at each is what a kill there leaves.
struct JobCrashHookTests {
    let harness = JobHarness()

    @Test func eachCrashPointIsReachedInOrderWithWhatTheFileHoldsThere() async throws {
        let queue = try harness.queue()
        let seen = Lock<[(JobCrashPoint, JobID, JobState?)]>([])
        queue.register(Echo.self) { _, _ in }
        queue.setCrashHook { point, id in
            // Read the file as a restart would find it, were the process killed here.
            let state = try? queue.job(id)?.state
            seen.withLock { $0.append((point, id, state)) }
        }
        try await queue.start()
        let id = try await queue.enqueue(Echo.self, .init(value: 1))
        #expect(try await queue.ended(id).state == .succeeded)
        let points = seen.withLock { $0 }
        #expect(points.map(\.0) == [.insideHandler, .afterHandler, .beforeCommit])
        #expect(points.allSatisfy { $0.1 == id && $0.2 == .running })
        await queue.shutdown()
    }

    @Test func aRetriedAttemptIsCountedInTheFileBeforeTheHandlerRuns() async throws {
        let queue = try harness.queue()
        let attempts = Lock<[Int]>([])
        queue.register(Echo.self) { _, context in
            if context.attempt < 3 { throw Boom(attempt: context.attempt) }
        }
        queue.setCrashHook { point, id in
            guard point == .insideHandler, let record = try? queue.job(id) else { return }
            attempts.withLock { $0.append(record.attempts) }
        }
        try await queue.start()
        let id = try await queue.enqueue(
            Echo.self, .init(value: 1), options: JobOptions(retry: .attempts(3, backoff: .zero)))
        let record = try await queue.ended(id)
        #expect(record.state == .succeeded && record.attempts == 3)
        // A kill inside attempt n leaves n attempts recorded: the next delivery starts at n + 1.
        #expect(attempts.withLock { $0 } == [1, 2, 3])
        await queue.shutdown()
    }
}
