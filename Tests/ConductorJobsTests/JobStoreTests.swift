import Foundation
import GRDB
import Testing

@testable import ConductorJobs

/// The store alone, on a temporary file: inserts, claims, ends and recovery, each one
/// transaction, with no queue or graph around them.
struct JobStoreTests {
    let file = TemporaryFile("store")
    let now = Date(timeIntervalSince1970: 1_000_000)

    private func open() throws -> JobStore {
        try JobStore(path: file.path, synchronous: .normal, busyTimeout: .milliseconds(100))
    }

    private func insert(
        _ store: JobStore, kind: String = "k", _ options: JobOptions = JobOptions(), at time: Date? = nil
    ) async throws -> JobInsertResult {
        let now = time ?? self.now
        return try await store.write { db in
            try JobStore.insert(JobInsertion(kind: kind, payload: Data("{}".utf8), options: options), now: now, in: db)
        }
    }

    private func claim(
        _ store: JobStore, limit: Int = 10, kinds: Set<String> = ["k"], satisfied: Set<String> = [],
        at time: Date? = nil
    ) async throws -> JobClaim {
        let now = time ?? self.now
        return try await store.write { db in
            try JobStore.claim(limit: limit, kinds: kinds, satisfied: satisfied, now: now, in: db)
        }
    }

    private func state(_ store: JobStore, _ id: JobID) throws -> JobState? {
        try store.read { try JobStore.record(id, in: $0) }?.state
    }

    // MARK: - Opening

    @Test func opensCreatesAndReopensTheSameJobs() async throws {
        let first = try await insert(try open())
        let reopened = try open()
        let record = try #require(try reopened.read { try JobStore.record(first.id, in: $0) })
        #expect(record.state == .pending)
        #expect(UUID(uuidString: record.idempotencyKey) != nil)
        #expect(record.deliveries == 0 && record.attempts == 0)
    }

    @Test(arguments: [(JobQueueConfiguration.Synchronous.full, 2), (.normal, 1)])
    func theSynchronousSettingIsTheOneAskedFor(setting: JobQueueConfiguration.Synchronous, level: Int) throws {
        // WAL mode's set-up must not override it: FULL is what keeps a commit across power loss.
        let store = try JobStore(path: file.path, synchronous: setting, busyTimeout: .milliseconds(100))
        #expect(try store.read { try Int.fetchOne($0, sql: "PRAGMA synchronous") } == level)
        #expect(try store.read { try String.fetchOne($0, sql: "PRAGMA journal_mode") } == "wal")
    }

    @Test func garbageBytesAreCorruptNamingTheFile() throws {
        try Data(repeating: 0x5A, count: 8192).write(to: URL(fileURLWithPath: file.path))
        let error = #expect(throws: JobQueueError.self) { try open() }
        #expect(error?.code == .corrupt)
        #expect(error?.message.contains(file.path) == true)
    }

    @Test func aMissingFolderCannotOpen() throws {
        let error = #expect(throws: JobQueueError.self) {
            try JobStore(path: "/nonexistent-folder-\(UUID())/jobs.sqlite", synchronous: .full, busyTimeout: .zero)
        }
        #expect(error?.code == .cannotOpen)
        #expect(error?.message.contains("nonexistent-folder") == true)
    }

    // MARK: - Inserting

    @Test func keepExistingReturnsThePendingJob() async throws {
        let store = try open()
        let first = try await insert(store, JobOptions(unique: .keepExisting("sync")))
        let second = try await insert(store, JobOptions(unique: .keepExisting("sync")))
        #expect(second.id == first.id && !second.inserted)
    }

    @Test func replaceExistingCancelsThePendingJobInTheSameTransaction() async throws {
        let store = try open()
        let first = try await insert(store, JobOptions(unique: .replaceExisting("draft")))
        let second = try await insert(store, JobOptions(unique: .replaceExisting("draft")))
        #expect(second.id != first.id && second.inserted && second.ended == [first.id])
        #expect(try state(store, first.id) == .cancelled)
        #expect(try state(store, second.id) == .pending)
    }

    @Test func replaceExistingRefusesARunningJob() async throws {
        let store = try open()
        let first = try await insert(store, JobOptions(unique: .replaceExisting("draft")))
        _ = try await claim(store)
        await #expect(throws: JobQueueError.self) {
            try await insert(store, JobOptions(unique: .replaceExisting("draft")))
        }
        #expect(try state(store, first.id) == .running)
    }

    @Test func afterAnUnknownJobIsRefused() async throws {
        let store = try open()
        let error = await #expect(throws: JobQueueError.self) {
            try await insert(store, JobOptions(after: [JobID(rawValue: 99)]))
        }
        #expect(error?.code == .unknownJob)
    }

    // MARK: - Claiming

    @Test func claimsByPriorityThenIDUpToTheLimit() async throws {
        let store = try open()
        let low = try await insert(store, JobOptions(priority: .low))
        let high = try await insert(store, JobOptions(priority: .high))
        let medium = try await insert(store, JobOptions(priority: .medium))
        let claim = try await claim(store, limit: 2)
        #expect(claim.claimed.map(\.id) == [high.id, medium.id])
        #expect(claim.claimed.allSatisfy { $0.delivery == 1 && $0.attemptsBefore == 0 })
        #expect(try state(store, low.id) == .pending)
    }

    @Test func claimsOnlyRegisteredDueUnblockedSatisfiedJobs() async throws {
        let store = try open()
        let other = try await insert(store, kind: "other")
        let later = try await insert(store, JobOptions(notBefore: now + 10))
        let constrained = try await insert(store, JobOptions(constraints: ["network"]))
        let first = try await insert(store)
        let second = try await insert(store, JobOptions(after: [first.id]))
        #expect(try await claim(store).claimed.map(\.id) == [first.id])
        #expect(try await claim(store, satisfied: ["network"]).claimed.map(\.id) == [constrained.id])
        #expect(try store.read { try JobStore.nextDueTime(kinds: ["k"], now: now, in: $0) } == now + 10)
        _ = try await store.write { db in
            try JobStore.finish(first.id, delivery: 1, as: .succeeded, error: nil, attempts: 1, now: now, in: db)
        }
        #expect(try await claim(store, at: now + 10).claimed.map(\.id) == [later.id, second.id])
        #expect(try state(store, other.id) == .pending)
    }

    @Test func anExpiredJobEndsExpiredInTheClaimPass() async throws {
        let store = try open()
        let job = try await insert(store, JobOptions(expiresAt: now + 5))
        let claim = try await claim(store, limit: 0, at: now + 5)
        #expect(claim.ended == [job.id] && claim.claimed.isEmpty)
        let record = try #require(try store.read { try JobStore.record(job.id, in: $0) })
        #expect(record.state == .expired && record.lastError?.code == .expired)
    }

    // MARK: - Ending

    @Test func finishIsACompareAndSetOnTheDelivery() async throws {
        let store = try open()
        let job = try await insert(store)
        _ = try await claim(store)
        let stale = try await store.write { db in
            try JobStore.finish(job.id, delivery: 2, as: .succeeded, error: nil, attempts: 1, now: now, in: db)
        }
        #expect(stale == nil)
        let done = try await store.write { db in
            try JobStore.finish(job.id, delivery: 1, as: .succeeded, error: nil, attempts: 1, now: now, in: db)
        }
        #expect(done == [job.id])
        let again = try await store.write { db in
            try JobStore.finish(job.id, delivery: 1, as: .failed, error: nil, attempts: 1, now: now, in: db)
        }
        #expect(again == nil)
        #expect(try state(store, job.id) == .succeeded)
    }

    @Test func aFailureCancelsDependentsTransitivelyInOneTransaction() async throws {
        let store = try open()
        let a = try await insert(store)
        let b = try await insert(store, JobOptions(after: [a.id]))
        let c = try await insert(store, JobOptions(after: [b.id]))
        _ = try await claim(store)
        let error = JobQueueError.ended(.handlerFailed, job: a.id, kind: "k", "failed")
        let ended = try await store.write { db in
            try JobStore.finish(a.id, delivery: 1, as: .failed, error: error, attempts: 3, now: now, in: db)
        }
        #expect(ended == [a.id, b.id, c.id])
        let record = try #require(try store.read { try JobStore.record(c.id, in: $0) })
        #expect(record.state == .cancelled && record.lastError?.code == .dependencyFailed)
        #expect(record.lastError?.message.contains("job \(b.id)") == true)
        // Enqueued after its dependency failed: ended at once.
        let d = try await insert(store, JobOptions(after: [a.id]))
        #expect(d.ended == [d.id])
    }

    @Test func cancellingTheHeadOfALongChainEndsEveryLinkInOneTransaction() async throws {
        let store = try open()
        let links = 2_000
        let ids = try await store.write { db in
            var ids: [JobID] = []
            for _ in 0..<links {
                let options = JobOptions(after: ids.last.map { [$0] } ?? [])
                let job = JobInsertion(kind: "k", payload: Data("{}".utf8), options: options)
                ids.append(try JobStore.insert(job, now: now, in: db).id)
            }
            return ids
        }
        let ended = try await store.write { db in try JobStore.cancelPending(ids[0], now: now, in: db) }
        #expect(ended == ids)
        let last = try #require(try store.read { try JobStore.record(ids[links - 1], in: $0) })
        #expect(last.state == .cancelled && last.lastError?.code == .dependencyFailed)
        #expect(last.lastError?.message.contains("job \(ids[links - 2])") == true)
    }

    @Test func recoveryPutsRunningJobsBackWithTheirDeliveryCount() async throws {
        let store = try open()
        let job = try await insert(store)
        _ = try await claim(store)
        let requeued = try await store.write { try JobStore.requeueRunning(in: $0) }
        #expect(requeued == [job.id])
        let again = try await claim(store)
        #expect(again.claimed.map(\.delivery) == [2])
        #expect(again.claimed.map(\.attemptsBefore) == [1])
    }

    @Test func aPeriodicOccurrenceSchedulesTheNextOnTheGridSkippingMissedOnes() async throws {
        let store = try open()
        let first = try await store.write { [now] db in
            try JobStore.insert(
                JobInsertion(
                    kind: "k", payload: Data("{}".utf8), options: JobOptions(unique: .keepExisting("tick")),
                    period: .seconds(60), scheduledAt: now), now: now, in: db)
        }
        _ = try await claim(store)
        // Ends 3.5 periods late: the next point is the latest one past (now + 180), not now + 60.
        _ = try await store.write { [now] db in
            try JobStore.finish(
                first.id, delivery: 1, as: .succeeded, error: nil, attempts: 1, now: now + 210, in: db)
        }
        let pending = try store.read { try JobStore.records(in: .pending, tag: nil, in: $0) }
        #expect(pending.count == 1)
        #expect(pending.first?.notBefore == now + 180)
        #expect(pending.first?.uniqueName == "tick" && pending.first?.period == .seconds(60))
    }
}
