import ConductorCore
import ConductorTestKit
import Foundation
import GRDB
import Testing

@testable import ConductorJobs

#if canImport(Glibc)
    import Glibc
#endif

/// Storage faults: each gives a typed error naming the file, loses nothing committed, and the
/// queue works again once the cause is gone.
struct JobQueueFaultTests {
    let harness = JobHarness()

    private func configuration() -> JobQueueConfiguration {
        var configuration = harness.configuration()
        configuration.busyTimeout = .zero  // a lock held by another connection fails at once
        return configuration
    }

    @Test func aFileLockedByAnotherConnectionIsDatabaseLockedThenWorksAfterRelease() async throws {
        let queue = try JobQueue(path: harness.file.path, configuration: configuration())
        queue.register(Echo.self) { _, _ in }
        try await queue.start()
        let before = try await queue.enqueue(Echo.self, .init(value: 1))
        #expect(try await queue.ended(before).state == .succeeded)

        var holding = Configuration()
        holding.allowsUnsafeTransactions = true  // the lock is held across two accesses
        let other = try DatabaseQueue(path: harness.file.path, configuration: holding)
        try other.inDatabase { db in try db.execute(sql: "BEGIN EXCLUSIVE") }
        let error = await #expect(throws: JobQueueError.self) { try await queue.enqueue(Echo.self, .init(value: 2)) }
        #expect(error?.code == .databaseLocked)
        #expect(error?.message == "the job queue file '\(harness.file.path)' is locked by another connection")
        try other.inDatabase { db in try db.execute(sql: "COMMIT") }

        let after = try await queue.enqueue(Echo.self, .init(value: 3))
        #expect(try await queue.ended(after).state == .succeeded)
        #expect(try queue.job(before)?.state == .succeeded)  // nothing committed was lost
        #expect(try queue.jobs().count == 2)
        await queue.shutdown()
    }

    @Test func aShutdownWhileTheFileIsOpenedForStartStopsTheStart() async throws {
        var slow = harness.configuration()
        slow.busyTimeout = .seconds(60)  // start() waits for the other connection's lock
        let queue = try JobQueue(path: harness.file.path, configuration: slow)
        let calls = Calls()
        queue.register(Echo.self) { _, context in calls.record(context) }
        let pending = try await queue.enqueue(Echo.self, .init(value: 1))

        var holding = Configuration()
        holding.allowsUnsafeTransactions = true  // the lock is held across two accesses
        let other = try DatabaseQueue(path: harness.file.path, configuration: holding)
        try other.inDatabase { db in try db.execute(sql: "BEGIN EXCLUSIVE") }
        let starting = Task { try await queue.start() }
        while queue.state.withLock({ if case .starting = $0.phase { false } else { true } }) {
            try Task.checkCancellation()
            await Task.yield()
        }
        await queue.shutdown()
        try other.inDatabase { db in try db.execute(sql: "COMMIT") }

        // The shutdown came first: the start fails, and nothing is claimed or runs, then or later.
        let error = await #expect(throws: JobQueueError.self) { try await starting.value }
        #expect(error?.code == .shutDown)
        #expect(queue.graphRun == nil)
        #expect(try queue.job(pending)?.state == .pending)
        await #expect(throws: JobQueueError.self) { try await queue.start() }
        #expect(calls.all.isEmpty)
    }

    @Test func aReadOnlyFileIsReadOnly() async throws {
        let writable = try JobQueue(path: harness.file.path, configuration: configuration())
        let id = try await writable.enqueue(Echo.self, .init(value: 1))
        let queue: JobQueue
        if getuid() == 0 {
            // Root writes whatever the permissions say: open it as SQLite opens a file it may not write.
            queue = try JobQueue(readOnlyPath: harness.file.path, configuration: configuration())
        } else {
            chmod(harness.file.path, 0o444)
            queue = try JobQueue(path: harness.file.path, configuration: configuration())
        }
        #expect(try queue.job(id)?.state == .pending)  // what is committed can still be read
        let error = await #expect(throws: JobQueueError.self) { try await queue.enqueue(Echo.self, .init(value: 2)) }
        #expect(error?.code == .readOnly)
        #expect(error?.message == "the job queue file '\(harness.file.path)' is read-only")
    }

    @Test func garbageBytesAreCorruptAtOpen() throws {
        try Data((0..<16_384).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }).write(
            to: URL(fileURLWithPath: harness.file.path))
        let error = #expect(throws: JobQueueError.self) { try harness.queue() }
        #expect(error?.code == .corrupt)
        #expect(
            error?.message == "the job queue file '\(harness.file.path)' is not a job queue database, or is damaged")
    }

    @Test func aFullDiskIsDiskFullThenWorksOnceThereIsRoom() async throws {
        let queue = try harness.queue()
        let first = try await queue.enqueue(Echo.self, .init(value: 1))
        // The database may not grow past the pages it has: what a full disk looks like to SQLite.
        try await queue.store.database.writeWithoutTransaction { db in
            let pages = try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 1
            try db.execute(sql: "PRAGMA max_page_count = \(pages)")
        }
        let big = Other.Payload(text: String(repeating: "x", count: 64 * 1024))
        let error = await #expect(throws: JobQueueError.self) { try await queue.enqueue(Other.self, big) }
        #expect(error?.code == .diskFull)
        #expect(error?.message.contains("'\(harness.file.path)'") == true)
        try await queue.store.database.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA max_page_count = 1073741823")
        }
        let second = try await queue.enqueue(Other.self, big)
        #expect(try queue.jobs().map(\.id) == [first, second])
    }

    @Test func aMissingFolderCannotOpen() throws {
        let path = "/nonexistent-\(UUID().uuidString)/jobs.sqlite"
        let error = #expect(throws: JobQueueError.self) { try JobQueue(path: path) }
        #expect(error?.code == .cannotOpen)
        #expect(error?.message == "the job queue file '\(path)' cannot be opened")
    }
}
