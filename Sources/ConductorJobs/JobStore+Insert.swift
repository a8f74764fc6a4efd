internal import Foundation
internal import GRDB

/// A job to insert, with everything the file keeps about it.
struct JobInsertion: Sendable {
    var kind: String
    var payload: Data
    var options: JobOptions
    /// For an occurrence of a periodic job: its period and the time it was scheduled for.
    var period: Duration?
    var scheduledAt: Date?
}

/// What an insert did.
struct JobInsertResult: Sendable {
    var id: JobID
    /// `false` when a unique job kept the existing one.
    var inserted: Bool
    /// Jobs the insert ended: a replaced job and its dependents, or the new job itself when a
    /// job it runs after had already failed.
    var ended: [JobID]
}

extension JobStore {
    /// Inserts one job (honouring its unique name) in the current transaction.
    static func insert(_ job: JobInsertion, now: Date, in db: Database) throws -> JobInsertResult {
        var ended: [JobID] = []
        if let unique = job.options.unique,
            let existing = try Row.fetchOne(
                db, sql: "SELECT id, state FROM job WHERE uniqueName = ? AND state IN ('pending', 'running')",
                arguments: [unique.name])
        {
            let existingID = JobID(rawValue: existing["id"])
            switch unique.policy {
            case .keep:
                return JobInsertResult(id: existingID, inserted: false, ended: [])
            case .replace:
                guard existing["state"] as String == JobState.pending.rawValue else {
                    throw JobQueueError.uniqueJobRunning(unique.name, job: existingID)
                }
                let kind: String =
                    try String.fetchOne(db, sql: "SELECT kind FROM job WHERE id = ?", arguments: [existingID.rawValue])
                    ?? ""
                let error = JobQueueError.ended(
                    .cancelled, job: existingID, kind: kind, "was replaced by a new job named '\(unique.name)'")
                ended += try end(existingID, as: .cancelled, error: error, now: now, in: db)
            }
        }
        for before in job.options.after {
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM job WHERE id = ?", arguments: [before.rawValue]) == true
            else { throw JobQueueError.unknownJob(before) }
        }
        let id = try insertRow(job, now: now, in: db)
        for tag in job.options.tags {
            try db.execute(sql: "INSERT INTO job_tag (jobID, tag) VALUES (?, ?)", arguments: [id.rawValue, tag])
        }
        for name in Set(job.options.constraints) {
            try db.execute(
                sql: "INSERT INTO job_constraint (jobID, name) VALUES (?, ?)", arguments: [id.rawValue, name])
        }
        for before in Set(job.options.after) {
            try db.execute(
                sql: "INSERT INTO job_edge (beforeID, afterID) VALUES (?, ?)",
                arguments: [before.rawValue, id.rawValue])
        }
        // A job it runs after that has already ended without success: this one never can run.
        if let failed = try Row.fetchOne(
            db,
            sql: """
                SELECT b.id, b.kind, b.state FROM job_edge e JOIN job b ON b.id = e.beforeID
                WHERE e.afterID = ? AND b.state IN ('failed', 'cancelled', 'expired') LIMIT 1
                """, arguments: [id.rawValue])
        {
            ended += try end(
                id, as: .cancelled, error: dependencyFailed(id, kind: job.kind, before: failed), now: now, in: db)
        }
        return JobInsertResult(id: id, inserted: true, ended: ended)
    }

    private static func insertRow(_ job: JobInsertion, now: Date, in db: Database) throws -> JobID {
        let options = job.options
        try db.execute(
            sql: """
                INSERT INTO job (kind, payload, state, uniqueName, priority, notBefore, expiresAt, idempotencyKey,
                    maxAttempts, initialBackoff, backoffMultiplier, maxBackoff, timeout, enqueuedAt,
                    periodicInterval, scheduledAt)
                VALUES (?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                job.kind, job.payload, options.unique?.name, Int(options.priority.rawValue),
                options.notBefore?.timeIntervalSince1970, options.expiresAt?.timeIntervalSince1970,
                UUID().uuidString, options.retry.maxAttempts, options.retry.initialBackoff.seconds,
                options.retry.multiplier, options.retry.maxBackoff.seconds, options.timeout?.seconds,
                now.timeIntervalSince1970, job.period?.seconds, job.scheduledAt?.timeIntervalSince1970,
            ])
        return JobID(rawValue: db.lastInsertedRowID)
    }

    /// The error a job ends with when `before` (a row of `id`, `kind`, `state`) did not succeed.
    static func dependencyFailed(_ id: JobID, kind: String, before: Row) -> JobQueueError {
        let beforeID: Int64 = before["id"]
        let beforeKind: String = before["kind"]
        let beforeState: String = before["state"]
        return JobQueueError.ended(
            .dependencyFailed, job: id, kind: kind,
            "was cancelled: job \(beforeID) (\(beforeKind)), which it runs after, ended \(beforeState)")
    }
}
