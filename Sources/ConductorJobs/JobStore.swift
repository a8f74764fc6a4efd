internal import Foundation
internal import GRDB

/// The queue's file: one SQLite database in WAL mode, opened through one GRDB `DatabaseQueue`,
/// so every write is serialised on its writer — which is also what orders a claim against a
/// cancel (see `JobQueueStorage`).
///
/// Every method maps SQLite's result codes to a ``JobQueueError`` that names the file.
final class JobStore: Sendable {
    let path: String
    let database: DatabaseQueue

    /// Opens (or creates) the file and brings its schema up to date.
    init(
        path: String, synchronous: JobQueueConfiguration.Synchronous, busyTimeout: Duration, readOnly: Bool = false
    ) throws(JobQueueError) {
        self.path = path
        var configuration = Configuration()
        configuration.readonly = readOnly
        configuration.journalMode = .wal
        configuration.busyMode = .timeout(busyTimeout.seconds)
        configuration.label = "ConductorJobs"
        do {
            database = try DatabaseQueue(path: path, configuration: configuration)
            // After the queue is open, not in `prepareDatabase`: turning WAL on, GRDB sets
            // `synchronous` to NORMAL, which would silently drop the durability FULL promises.
            // A `DatabaseQueue` has this one connection for its life.
            if !readOnly {
                try database.writeWithoutTransaction { db in
                    try db.execute(sql: "PRAGMA synchronous = \(synchronous.rawValue)")
                }
            }
            try Self.migrator.migrate(database)
        } catch {
            throw Self.error(error, path: path, opening: true)
        }
    }

    /// Runs `body` in one IMMEDIATE transaction on the writer.
    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(JobQueueError) -> T {
        try await write(body, then: { $0 })
    }

    /// Runs `body` in one IMMEDIATE transaction on the writer, then `then` with its result,
    /// still on the writer: what the queue records in memory about a commit happens before any
    /// other write can begin (a claim's running jobs are known before a cancel looks for them).
    func write<T: Sendable, U: Sendable>(
        _ body: @escaping @Sendable (Database) throws -> T,
        then: @escaping @Sendable (T) -> U
    ) async throws(JobQueueError) -> U {
        do {
            return try await database.writeWithoutTransaction { db in
                var result: T?
                try db.inTransaction(.immediate) {
                    result = try body(db)
                    return .commit
                }
                return then(result!)
            }
        } catch {
            throw Self.error(error, path: path)
        }
    }

    /// A read of the committed state.
    func read<T: Sendable>(_ body: @Sendable (Database) throws -> T) throws(JobQueueError) -> T {
        do {
            return try database.read(body)
        } catch {
            throw Self.error(error, path: path)
        }
    }

    /// `error` as a ``JobQueueError`` naming the file: SQLite's result code picks the code.
    static func error(_ error: any Error, path: String, opening: Bool = false) -> JobQueueError {
        if let error = error as? JobQueueError { return error }
        guard let error = error as? DatabaseError else {
            return JobQueueError(.storage, "the job queue file '\(path)' failed: \(error)", underlying: error)
        }
        let (code, what): (JobQueueError.Code, String) =
            switch error.resultCode {
            case .SQLITE_BUSY, .SQLITE_LOCKED: (.databaseLocked, "is locked by another connection")
            case .SQLITE_READONLY: (.readOnly, "is read-only")
            case .SQLITE_CORRUPT, .SQLITE_NOTADB: (.corrupt, "is not a job queue database, or is damaged")
            case .SQLITE_FULL: (.diskFull, "cannot grow: the disk (or its page limit) is full")
            case .SQLITE_CANTOPEN: (.cannotOpen, "cannot be opened")
            default:
                (
                    opening ? .cannotOpen : .storage,
                    "failed (SQLite \(error.resultCode.rawValue): \(error.message ?? "no message"))"
                )
            }
        return JobQueueError(code, "the job queue file '\(path)' \(what)", underlying: error)
    }
}

extension Duration {
    /// Seconds as a `Double`, as the file stores durations.
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
