internal import Foundation
internal import GRDB

extension JobStore {
    /// Ends job `id` as `state` in the current transaction, whatever state it is in, and
    /// everything that follows in the same transaction: dependents that can no longer run end
    /// cancelled (``JobQueueError/Code/dependencyFailed``), and a periodic job's next
    /// occurrence is inserted (unless it was cancelled). Returns every job it ended.
    static func end(_ id: JobID, as state: JobState, error: JobQueueError?, now: Date, in db: Database) throws
        -> [JobID]
    {
        guard try endOne(id, as: state, error: error, now: now, in: db) else { return [] }
        var ended = [id]
        // A worklist, not recursion: a chain of thousands of jobs (each message after the one
        // before) would otherwise take a stack frame per link on GRDB's writer thread.
        var failed = state == .succeeded ? [] : [id]
        while let before = failed.popLast() {
            for (dependent, error) in try dependentsToCancel(of: before, in: db)
            where try endOne(dependent, as: .cancelled, error: error, now: now, in: db) {
                ended.append(dependent)
                failed.append(dependent)
            }
        }
        return ended
    }

    /// Ends job `id` alone if it has not ended; returns whether it did.
    private static func endOne(_ id: JobID, as state: JobState, error: JobQueueError?, now: Date, in db: Database)
        throws -> Bool
    {
        try db.execute(
            sql: """
                UPDATE job SET state = ?, endedAt = ?, lastErrorCode = ?, lastErrorMessage = ?
                WHERE id = ? AND state IN ('pending', 'running')
                """,
            arguments: [
                state.rawValue, now.timeIntervalSince1970, error.map { "\($0.code)" }, error?.message, id.rawValue,
            ])
        guard db.changesCount == 1 else { return false }
        if state != .cancelled {
            try insertNextOccurrence(of: id, now: now, in: db)
        }
        return true
    }

    /// Ends job `id` if it is still running in `delivery` (the compare-and-set that lets the
    /// first of a handler's end, a timeout and a cancel be the one recorded). `nil` if it was not.
    static func finish(
        _ id: JobID, delivery: Int, as state: JobState, error: JobQueueError?, attempts: Int, now: Date,
        in db: Database
    ) throws -> [JobID]? {
        try db.execute(
            sql: "UPDATE job SET attempts = max(attempts, ?) WHERE id = ? AND state = 'running' AND deliveries = ?",
            arguments: [attempts, id.rawValue, delivery])
        guard db.changesCount == 1 else { return nil }
        return try end(id, as: state, error: error, now: now, in: db)
    }

    /// The pending jobs that run after `id`, each with the error that ends it.
    private static func dependentsToCancel(of id: JobID, in db: Database) throws -> [(JobID, JobQueueError)] {
        guard
            let before = try Row.fetchOne(
                db, sql: "SELECT id, kind, state FROM job WHERE id = ?", arguments: [id.rawValue])
        else { return [] }
        let dependents = try Row.fetchAll(
            db,
            sql: """
                SELECT j.id, j.kind FROM job_edge e JOIN job j ON j.id = e.afterID
                WHERE e.beforeID = ? AND j.state = 'pending'
                """, arguments: [id.rawValue])
        return dependents.map { dependent in
            let dependentID = JobID(rawValue: dependent["id"])
            return (dependentID, dependencyFailed(dependentID, kind: dependent["kind"], before: before))
        }
    }

    /// A periodic job's next occurrence, due at the next point of its grid: the time the ended
    /// one was scheduled for plus whole periods, so it never drifts; after a downtime the missed
    /// points are skipped and the latest one past runs once, at once.
    private static func insertNextOccurrence(of id: JobID, now: Date, in db: Database) throws {
        guard
            let row = try Row.fetchOne(
                db, sql: "SELECT * FROM job WHERE id = ? AND periodicInterval IS NOT NULL", arguments: [id.rawValue])
        else { return }
        let interval: Double = row["periodicInterval"]
        let scheduled: Double = row["scheduledAt"] ?? row["enqueuedAt"]
        let missed = ((now.timeIntervalSince1970 - scheduled) / interval).rounded(.down)
        let next = scheduled + interval * max(1, missed)
        var options = JobOptions(
            unique: (row["uniqueName"] as String?).map(JobUniqueness.keepExisting),
            tags: Set(
                try String.fetchAll(db, sql: "SELECT tag FROM job_tag WHERE jobID = ?", arguments: [id.rawValue])),
            notBefore: Date(timeIntervalSince1970: next),
            priority: TaskPriority(rawValue: UInt8(row["priority"] as Int)),
            retry: retryPolicy(of: row),
            timeout: (row["timeout"] as Double?).map { Duration.seconds($0) })
        options.constraints = try String.fetchAll(
            db, sql: "SELECT name FROM job_constraint WHERE jobID = ?", arguments: [id.rawValue])
        _ = try insert(
            JobInsertion(
                kind: row["kind"], payload: row["payload"], options: options, period: .seconds(interval),
                scheduledAt: Date(timeIntervalSince1970: next)),
            now: now, in: db)
    }

    /// The retry policy a row stores.
    static func retryPolicy(of row: Row) -> RetryPolicy {
        .attempts(
            row["maxAttempts"], backoff: .seconds(row["initialBackoff"] as Double),
            multiplier: row["backoffMultiplier"], maxBackoff: .seconds(row["maxBackoff"] as Double))
    }

    /// Cancels job `id` if it is pending. Returns the jobs it ended (empty if it was not pending).
    static func cancelPending(_ id: JobID, now: Date, in db: Database) throws -> [JobID] {
        guard
            let kind = try String.fetchOne(
                db, sql: "SELECT kind FROM job WHERE id = ? AND state = 'pending'", arguments: [id.rawValue])
        else { return [] }
        let error = JobQueueError.ended(.cancelled, job: id, kind: kind, "was cancelled")
        return try end(id, as: .cancelled, error: error, now: now, in: db)
    }

    /// Puts every running job back to pending: their process ended before their end was
    /// recorded. Their delivery count already says how many times they started.
    static func requeueRunning(in db: Database) throws -> [JobID] {
        let ids = try Int64.fetchAll(db, sql: "SELECT id FROM job WHERE state = 'running' ORDER BY id")
        try db.execute(sql: "UPDATE job SET state = 'pending' WHERE state = 'running'")
        return ids.map(JobID.init(rawValue:))
    }

    /// Pending jobs of kinds not in `registered`, counted by kind.
    static func unknownKinds(registered: Set<String>, in db: Database) throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for row in try Row.fetchAll(
            db, sql: "SELECT kind, COUNT(*) AS n FROM job WHERE state = 'pending' GROUP BY kind")
        {
            let kind: String = row["kind"]
            if !registered.contains(kind) { counts[kind] = row["n"] }
        }
        return counts
    }

    /// Deletes the jobs that ended before `cutoff`, with their tags, constraints and edges;
    /// returns how many. A job that runs after a deleted one lost nothing: a deleted job had
    /// succeeded (its dependents may run) or had already ended its dependents.
    static func removeEnded(before cutoff: Date, in db: Database) throws -> Int {
        try db.execute(
            sql: """
                DELETE FROM job WHERE state IN ('succeeded', 'failed', 'cancelled', 'expired') AND endedAt < ?
                """,
            arguments: [cutoff.timeIntervalSince1970])
        return db.changesCount
    }
}
