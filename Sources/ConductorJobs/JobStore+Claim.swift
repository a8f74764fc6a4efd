internal import Foundation
internal import GRDB

/// A job claimed for one delivery: what the dispatcher needs to run it.
struct ClaimedJob: Sendable {
    var id: JobID
    var kind: String
    var payload: Data
    var idempotencyKey: String
    /// This delivery, from 1.
    var delivery: Int
    /// Attempts made by earlier deliveries.
    var attemptsBefore: Int
    var priority: TaskPriority
    var retry: RetryPolicy
    var timeout: Duration?

    /// The policy for this delivery: what earlier deliveries left of the job's attempts, and at
    /// least one (a job re-run after a crash always runs).
    var deliveryRetry: RetryPolicy {
        .attempts(
            max(1, retry.maxAttempts - attemptsBefore), backoff: retry.initialBackoff, multiplier: retry.multiplier,
            maxBackoff: retry.maxBackoff)
    }
}

/// What one claim pass did.
struct JobClaim: Sendable {
    var claimed: [ClaimedJob] = []
    /// Jobs that expired, and what their expiry ended with them.
    var ended: [JobID] = []
}

extension JobStore {
    /// One claim pass, in the current transaction: due pending jobs of `kinds` that expired end
    /// ``JobState/expired``; then up to `limit` due, unblocked, constraint-satisfied ones move to
    /// running (deliveries + 1, attempts + 1 for this delivery's first), by priority then id.
    static func claim(
        limit: Int, kinds: Set<String>, satisfied: Set<String>, now: Date, in db: Database
    ) throws -> JobClaim {
        var result = JobClaim()
        guard !kinds.isEmpty else { return result }
        let time = now.timeIntervalSince1970
        let kindList = placeholders(kinds.count)
        let expired = try Int64.fetchAll(
            db,
            sql: "SELECT id FROM job WHERE state = 'pending' AND expiresAt <= ? AND kind IN \(kindList) ORDER BY id",
            arguments: StatementArguments([time] as [any DatabaseValueConvertible]) + StatementArguments(Array(kinds)))
        for id in expired {
            let kind = try String.fetchOne(db, sql: "SELECT kind FROM job WHERE id = ?", arguments: [id]) ?? ""
            let error = JobQueueError.ended(.expired, job: JobID(rawValue: id), kind: kind, "expired before it started")
            result.ended += try end(JobID(rawValue: id), as: .expired, error: error, now: now, in: db)
        }
        guard limit > 0 else { return result }
        let rows = try Row.fetchAll(
            db,
            sql: """
                SELECT * FROM job
                WHERE state = 'pending' AND kind IN \(kindList) AND (notBefore IS NULL OR notBefore <= ?)
                  AND NOT EXISTS (SELECT 1 FROM job_edge e JOIN job b ON b.id = e.beforeID
                                  WHERE e.afterID = job.id AND b.state != 'succeeded')
                  AND NOT EXISTS (SELECT 1 FROM job_constraint c
                                  WHERE c.jobID = job.id AND c.name NOT IN \(placeholders(satisfied.count)))
                ORDER BY priority DESC, id LIMIT ?
                """,
            arguments: StatementArguments(Array(kinds)) + [time] + StatementArguments(Array(satisfied)) + [limit])
        for row in rows {
            let id: Int64 = row["id"]
            try db.execute(
                sql: """
                    UPDATE job SET state = 'running', deliveries = deliveries + 1, attempts = attempts + 1,
                        startedAt = ? WHERE id = ?
                    """, arguments: [time, id])
            result.claimed.append(
                ClaimedJob(
                    id: JobID(rawValue: id), kind: row["kind"], payload: row["payload"],
                    idempotencyKey: row["idempotencyKey"], delivery: row["deliveries"] as Int + 1,
                    attemptsBefore: row["attempts"], priority: TaskPriority(rawValue: UInt8(row["priority"] as Int)),
                    retry: retryPolicy(of: row), timeout: (row["timeout"] as Double?).map { Duration.seconds($0) }))
        }
        return result
    }

    /// Records that a later attempt of a delivery started, so a re-run after a crash counts it.
    static func recordAttempt(_ id: JobID, delivery: Int, attempt: Int, in db: Database) throws {
        try db.execute(
            sql: "UPDATE job SET attempts = max(attempts, ?) WHERE id = ? AND state = 'running' AND deliveries = ?",
            arguments: [attempt, id.rawValue, delivery])
    }

    /// The earliest wall-clock time after `now` at which a pending job of `kinds` becomes due or
    /// expires: when the dispatcher should look again.
    static func nextDueTime(kinds: Set<String>, now: Date, in db: Database) throws -> Date? {
        guard !kinds.isEmpty else { return nil }
        let time = now.timeIntervalSince1970
        let seconds = try Double.fetchOne(
            db,
            sql: """
                SELECT min(t) FROM (
                    SELECT min(notBefore) AS t FROM job WHERE state = 'pending' AND notBefore > ? AND kind IN \(placeholders(kinds.count))
                    UNION ALL
                    SELECT min(expiresAt) FROM job WHERE state = 'pending' AND expiresAt > ? AND kind IN \(placeholders(kinds.count)))
                """,
            arguments: [time] + StatementArguments(Array(kinds)) + [time] + StatementArguments(Array(kinds)))
        return seconds.map(Date.init(timeIntervalSince1970:))
    }

    /// `(?, ?, …)` for `count` values; `()` for none, which SQLite reads as an empty list.
    private static func placeholders(_ count: Int) -> String {
        "(" + Array(repeating: "?", count: count).joined(separator: ", ") + ")"
    }
}
