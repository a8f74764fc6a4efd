import ConductorCore
import ConductorTestKit
import Foundation
import GRDB
import Testing

@testable import ConductorJobs

/// Error codes not raised elsewhere in this target, each through the public API with the
/// message an app would see.
struct JobQueueErrorTests {
    let harness = JobHarness()

    struct Measurement: JobKind {
        static let name = "measurement"
        struct Payload: Codable, Sendable { var value: Double }
    }

    @Test func aPayloadThatCannotBeEncodedIsRefused() async throws {
        let queue = try harness.queue()
        let error = await #expect(throws: JobQueueError.self) {
            try await queue.enqueue(Measurement.self, .init(value: .nan))  // JSON has no NaN
        }
        #expect(error?.code == .payloadUnencodable)
        #expect(error?.message.hasPrefix("the payload of a job of kind 'measurement' cannot be encoded: ") == true)
        #expect(error?.underlyingError is EncodingError)
        #expect(try queue.jobs().isEmpty)
    }

    @Test func aRunningUniqueJobCannotBeReplaced() async throws {
        let queue = try harness.queue()
        let calls = Calls()
        let clock = harness.clock
        queue.register(Echo.self) { _, context in
            calls.record(context)
            try await clock.sleep(for: .seconds(3600))
        }
        try await queue.start()
        let running = try await queue.enqueue(
            Echo.self, .init(value: 1), options: JobOptions(unique: .replaceExisting("draft")))
        _ = await calls.events.first()
        let error = await #expect(throws: JobQueueError.self) {
            try await queue.enqueue(Echo.self, .init(value: 2), options: JobOptions(unique: .replaceExisting("draft")))
        }
        #expect(error?.code == .uniqueJobRunning)
        #expect(error?.message == "job \(running) named 'draft' is running and cannot be replaced until it ends")
        await queue.shutdown()
    }

    @Test func startAfterShutdownAndAConcurrencyLimitBelowOneAreRefused() async throws {
        var configuration = harness.configuration()
        configuration.concurrencyLimit = 0
        let queue = try JobQueue(path: harness.file.path, configuration: configuration)
        let invalid = await #expect(throws: JobQueueError.self) { try await queue.start() }
        #expect(invalid?.code == .invalidOption && invalid?.message == "concurrencyLimit must be at least 1 (got 0)")
        await queue.shutdown()
        let after = await #expect(throws: JobQueueError.self) { try await queue.start() }
        #expect(after?.code == .shutDown && after?.message == "cannot start: the job queue has been shut down")
    }

    /// A fault with no code of its own (an I/O error, or an error that is not SQLite's) is
    /// `storage`, still naming the file and saying what SQLite said; at open it is `cannotOpen`.
    @Test func aFaultWithNoCodeOfItsOwnIsStorageAndNamesTheFile() {
        let io = DatabaseError(resultCode: .SQLITE_IOERR, message: "disk I/O error")
        let error = JobStore.error(io, path: "/data/jobs.sqlite")
        #expect(error.code == .storage)
        #expect(error.message == "the job queue file '/data/jobs.sqlite' failed (SQLite 10: disk I/O error)")
        #expect(error.underlyingError is DatabaseError)
        #expect(JobStore.error(io, path: "/data/jobs.sqlite", opening: true).code == .cannotOpen)

        let other = JobStore.error(CocoaError(.fileReadUnknown), path: "/data/jobs.sqlite")
        #expect(other.code == .storage)
        #expect(other.message.hasPrefix("the job queue file '/data/jobs.sqlite' failed: "))
        // A queue error passes through unchanged.
        let shutDown = JobQueueError.shutDown("enqueue")
        #expect(JobStore.error(shutDown, path: "/data/jobs.sqlite") == shutDown)
    }
}
