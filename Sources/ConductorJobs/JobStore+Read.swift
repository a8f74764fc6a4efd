internal import Foundation
internal import GRDB

extension JobStore {
    /// Job `id` as recorded, or `nil`.
    static func record(_ id: JobID, in db: Database) throws -> JobRecord? {
        guard let row = try Row.fetchOne(db, sql: "SELECT * FROM job WHERE id = ?", arguments: [id.rawValue]) else {
            return nil
        }
        return try record(row, in: db)
    }

    /// The jobs in `state` (any if `nil`) with `tag` (any if `nil`), by id.
    static func records(in state: JobState?, tag: String?, in db: Database) throws -> [JobRecord] {
        var clauses: [String] = []
        var arguments = StatementArguments()
        if let state {
            clauses.append("state = ?")
            arguments += [state.rawValue]
        }
        if let tag {
            clauses.append("id IN (SELECT jobID FROM job_tag WHERE tag = ?)")
            arguments += [tag]
        }
        let filter = clauses.isEmpty ? "" : "WHERE " + clauses.joined(separator: " AND ")
        return try Row.fetchAll(db, sql: "SELECT * FROM job \(filter) ORDER BY id", arguments: arguments).map {
            try record($0, in: db)
        }
    }

    private static func record(_ row: Row, in db: Database) throws -> JobRecord {
        let id: Int64 = row["id"]
        let error = (row["lastErrorCode"] as String?).flatMap(JobQueueError.Code.named).map {
            JobQueueError($0, row["lastErrorMessage"] ?? "")
        }
        return JobRecord(
            id: JobID(rawValue: id), kind: row["kind"], state: JobState(rawValue: row["state"]) ?? .pending,
            payload: row["payload"], idempotencyKey: row["idempotencyKey"], attempts: row["attempts"],
            deliveries: row["deliveries"], maxAttempts: row["maxAttempts"],
            tags: Set(try String.fetchAll(db, sql: "SELECT tag FROM job_tag WHERE jobID = ?", arguments: [id])),
            uniqueName: row["uniqueName"], priority: TaskPriority(rawValue: UInt8(row["priority"] as Int)),
            notBefore: date(row["notBefore"]), expiresAt: date(row["expiresAt"]),
            after: try Int64.fetchAll(
                db, sql: "SELECT beforeID FROM job_edge WHERE afterID = ? ORDER BY beforeID", arguments: [id]
            )
            .map(JobID.init(rawValue:)),
            enqueuedAt: Date(timeIntervalSince1970: row["enqueuedAt"]), startedAt: date(row["startedAt"]),
            endedAt: date(row["endedAt"]), lastError: error,
            period: (row["periodicInterval"] as Double?).map { Duration.seconds($0) })
    }

    private static func date(_ seconds: Double?) -> Date? { seconds.map(Date.init(timeIntervalSince1970:)) }

    /// Ids of the pending and running jobs with `tag`.
    static func activeJobs(tagged tag: String, in db: Database) throws -> [(id: JobID, state: JobState)] {
        try Row.fetchAll(
            db,
            sql: """
                SELECT id, state FROM job WHERE state IN ('pending', 'running')
                  AND id IN (SELECT jobID FROM job_tag WHERE tag = ?) ORDER BY id
                """, arguments: [tag]
        ).map { (JobID(rawValue: $0["id"]), JobState(rawValue: $0["state"]) ?? .pending) }
    }
}
