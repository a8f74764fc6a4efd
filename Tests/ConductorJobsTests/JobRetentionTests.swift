import ConductorTestKit
import Foundation
import GRDB
import Testing

@testable import ConductorJobs

/// Ended jobs leave the file after ``JobQueueConfiguration/endedJobRetention``, so a queue that
/// runs for months does not keep every job it ran; jobs that have not ended always stay.
@Suite(.timeLimit(.minutes(1))) struct JobRetentionTests {
    let harness = JobHarness()

    @Test func removeEndedDeletesOnlyJobsEndedBeforeTheDateAndFreesTheirDependents() async throws {
        let store = try JobStore(path: harness.file.path, synchronous: .normal, busyTimeout: .milliseconds(100))
        let origin = JobHarness.origin
        func insert(_ options: JobOptions = JobOptions()) async throws -> JobID {
            try await store.write { db in
                try JobStore.insert(
                    JobInsertion(kind: "k", payload: Data("{}".utf8), options: options), now: origin, in: db
                ).id
            }
        }
        let old = try await insert()
        let oldFailed = try await insert()
        let recent = try await insert()
        let pending = try await insert()
        let dependent = try await insert(JobOptions(after: [old]))
        try await store.write { db in
            _ = try JobStore.end(old, as: .succeeded, error: nil, now: origin, in: db)
            _ = try JobStore.end(oldFailed, as: .failed, error: nil, now: origin + 10, in: db)
            _ = try JobStore.end(recent, as: .succeeded, error: nil, now: origin + 100, in: db)
        }

        let removed = try await store.write { db in try JobStore.removeEnded(before: origin + 50, in: db) }
        #expect(removed == 2)
        let left = try store.read { db in try JobStore.records(in: nil, tag: nil, in: db) }
        #expect(left.map(\.id) == [recent, pending, dependent])
        // The job it ran after succeeded and is gone: the dependent is free to run.
        let claim = try await store.write { db in
            try JobStore.claim(limit: 10, kinds: ["k"], satisfied: [], now: origin + 100, in: db)
        }
        #expect(Set(claim.claimed.map(\.id)) == [pending, dependent])
    }

    private func queue(retention: Duration?) throws -> JobQueue {
        var configuration = harness.configuration()
        configuration.endedJobRetention = retention
        return try JobQueue(path: harness.file.path, configuration: configuration)
    }

    @Test func theQueueRemovesJobsEndedLongerAgoThanTheRetention() async throws {
        let queue = try queue(retention: .seconds(3600))
        queue.register(Echo.self) { _, _ in }
        try await queue.start()
        let old = try await queue.enqueue(Echo.self, .init(value: 1))
        #expect(try await queue.ended(old).state == .succeeded)

        harness.clock.advance(by: .seconds(7200))
        // The next pass (this enqueue wakes the dispatcher) removes the old job before it claims.
        let new = try await queue.enqueue(Echo.self, .init(value: 2))
        #expect(try await queue.ended(new).state == .succeeded)
        #expect(try queue.job(old) == nil)
        #expect(try queue.jobs().map(\.id) == [new])
        await queue.shutdown()
    }

    @Test func withoutARetentionEveryEndedJobStays() async throws {
        let queue = try queue(retention: nil)
        queue.register(Echo.self) { _, _ in }
        try await queue.start()
        let old = try await queue.enqueue(Echo.self, .init(value: 1))
        #expect(try await queue.ended(old).state == .succeeded)

        harness.clock.advance(by: .seconds(30 * 86_400))
        let new = try await queue.enqueue(Echo.self, .init(value: 2))
        #expect(try await queue.ended(new).state == .succeeded)
        #expect(try queue.jobs().map(\.id) == [old, new])
        #expect(try await queue.removeEnded(before: JobHarness.origin + 1) == 1)
        #expect(try queue.jobs().map(\.id) == [new])
        await queue.shutdown()
    }

    @Test func aNegativeRetentionIsRefusedAtStart() async throws {
        let queue = try queue(retention: .seconds(-1))
        let error = await #expect(throws: JobQueueError.self) { try await queue.start() }
        #expect(error?.code == .invalidOption)
        #expect(error?.message == "endedJobRetention must not be negative (got -1.0 seconds)")
    }
}
