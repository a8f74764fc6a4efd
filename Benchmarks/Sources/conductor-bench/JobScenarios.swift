import ConductorJobs
import Foundation
import GRDB

// MARK: - jobs.enqueue

/// The kind every job benchmark enqueues: a small order, as the queue's docs place.
struct BenchOrder: JobKind {
    static let name = "bench-order"
    struct Payload: Codable, Sendable {
        var orderID: String
        var cents: Int
    }
}

/// The `index`-th job's payload.
func benchOrder(_ index: Int) -> BenchOrder.Payload {
    BenchOrder.Payload(orderID: "order-\(index)", cents: 999)
}

/// A fresh folder in the temporary directory for one contender's file; the caller removes it
/// (and with it the file's `-wal` and `-shm` companions) with `removeJobFolder`.
func makeJobFolder() -> URL {
    let folder = FileManager.default.temporaryDirectory
        .appendingPathComponent("conductor-bench-jobs-\(UUID().uuidString)", isDirectory: true)
    try! FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder
}

func removeJobFolder(_ folder: URL) {
    try? FileManager.default.removeItem(at: folder)
}

/// One side of jobs.enqueue, set up on a fresh file: the work to time or count, and what
/// removes the file afterwards.
struct JobFileWork: Sendable {
    let work: @Sendable () async -> Void
    let cleanup: @Sendable () -> Void

    /// The work timed once, the file removed: µs a job.
    func microsecondsPerJob(_ n: Int) async -> Double {
        defer { cleanup() }
        return await nanosecondsPerOperation(n) { await work() } / 1_000
    }
}

/// `n` jobs enqueued one at a time, each awaited (its own write transaction, committed at
/// `synchronous`), on a queue that is never started, so nothing runs.
func queueEnqueue(_ n: Int, synchronous: JobQueueConfiguration.Synchronous) -> JobFileWork {
    let folder = makeJobFolder()
    let queue = try! JobQueue(
        path: folder.appendingPathComponent("jobs.sqlite").path,
        configuration: JobQueueConfiguration(synchronous: synchronous))
    return JobFileWork(
        work: { for index in 0..<n { try! await queue.enqueue(BenchOrder.self, benchOrder(index)) } },
        cleanup: { removeJobFolder(folder) })
}

/// The same `n` rows inserted with GRDB itself: one `INSERT` of the columns the queue writes,
/// with the same values (the payload's JSON, a fresh idempotency key, the default options),
/// per write transaction, into the same table — created by a `JobQueue` that is then closed, so
/// its indexes are there too.
func rawInsert(_ n: Int, synchronous: JobQueueConfiguration.Synchronous) -> JobFileWork {
    let folder = makeJobFolder()
    let path = folder.appendingPathComponent("jobs.sqlite").path
    do { _ = try JobQueue(path: path) } catch { fatalError("\(error)") }
    let database = openDatabase(path, synchronous: synchronous)
    let options = JobOptions()
    let insert = """
        INSERT INTO job (kind, payload, state, uniqueName, priority, notBefore, expiresAt, idempotencyKey,
            maxAttempts, initialBackoff, backoffMultiplier, maxBackoff, timeout, enqueuedAt,
            periodicInterval, scheduledAt)
        VALUES (?, ?, 'pending', NULL, ?, NULL, NULL, ?, ?, ?, ?, ?, NULL, ?, NULL, NULL)
        """
    let priority = Int(options.priority.rawValue)
    let retry = options.retry
    return JobFileWork(
        work: {
            for index in 0..<n {
                let payload = try! JSONEncoder().encode(benchOrder(index))
                let arguments: StatementArguments = [
                    BenchOrder.name, payload, priority, UUID().uuidString, retry.maxAttempts,
                    seconds(retry.initialBackoff), retry.multiplier, seconds(retry.maxBackoff),
                    Date().timeIntervalSince1970,
                ]
                try! await database.write { db in try db.execute(sql: insert, arguments: arguments) }
            }
        },
        cleanup: { removeJobFolder(folder) })
}

/// A GRDB queue on `path` in WAL mode at `synchronous`, as the job queue opens its file. The
/// PRAGMA is set once the queue is open: turning WAL on, GRDB sets NORMAL after
/// `prepareDatabase` runs. Read back, so the two sides are known to sync alike.
func openDatabase(_ path: String, synchronous: JobQueueConfiguration.Synchronous) -> DatabaseQueue {
    var configuration = GRDB.Configuration()
    configuration.journalMode = .wal
    let database = try! DatabaseQueue(path: path, configuration: configuration)
    let level = try! database.writeWithoutTransaction { db in
        try db.execute(sql: "PRAGMA synchronous = \(synchronous.rawValue)")
        return try Int.fetchOne(db, sql: "PRAGMA synchronous")
    }
    let expected = synchronous == .full ? 2 : 1
    precondition(level == expected, "the baseline's file syncs at \(String(describing: level)), not \(expected)")
    return database
}

/// Seconds as a `Double`, as the queue stores durations.
func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

/// jobs.enqueue at synchronous FULL, the default (the goal's row: ≤ 1.5× the raw insert), and
/// at NORMAL, where no commit waits for the disk and what the queue adds shows.
func jobsEnqueueScenario(_ n: Int, synchronous: JobQueueConfiguration.Synchronous) -> Scenario {
    Scenario(
        name: synchronous == .full ? "jobs.enqueue" : "jobs.enqueue (synchronous NORMAL)", n: n, unit: "µs/job",
        subject: Contender(name: "JobQueue.enqueue") {
            await queueEnqueue(n, synchronous: synchronous).microsecondsPerJob(n)
        },
        baselines: [
            Contender(name: "GRDB INSERT, one per transaction") {
                await rawInsert(n, synchronous: synchronous).microsecondsPerJob(n)
            }
        ],
        note: "one job per write transaction, each awaited, on a fresh file in the temporary directory per "
            + "round (WAL, synchronous \(synchronous.rawValue) on both sides); the queue is not started"
    )
}

// MARK: - a due job's dispatch (instructions)

/// A queue holding `n` committed due jobs whose handler does nothing, not started yet, and the
/// work `conductor-bench instructions` counts: start, then wait until every job has run and its
/// end is committed. Its cleanup (after counting) shuts the queue down, checks that every job
/// succeeded, and removes the file.
func dueJobsDispatch(_ n: Int) async -> JobFileWork {
    let folder = makeJobFolder()
    let queue = try! JobQueue(path: folder.appendingPathComponent("jobs.sqlite").path)
    queue.register(BenchOrder.self) { _, _ in }
    for index in 0..<n { try! await queue.enqueue(BenchOrder.self, benchOrder(index)) }
    return JobFileWork(
        work: {
            try! await queue.start()
            try! await queue.whenIdle()
        },
        cleanup: {
            precondition(try! queue.jobs(in: .succeeded).count == n, "not every job succeeded")
            removeJobFolder(folder)
        })
}
