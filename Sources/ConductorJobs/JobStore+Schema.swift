internal import GRDB

extension JobStore {
    /// The schema, one migration per version; a file written by a later version with
    /// migrations this one does not know is refused by GRDB rather than misread.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE job (
                        id INTEGER PRIMARY KEY AUTOINCREMENT,
                        kind TEXT NOT NULL,
                        payload BLOB NOT NULL,
                        state TEXT NOT NULL,
                        uniqueName TEXT,
                        priority INTEGER NOT NULL,
                        notBefore REAL,
                        expiresAt REAL,
                        idempotencyKey TEXT NOT NULL UNIQUE,
                        attempts INTEGER NOT NULL DEFAULT 0,
                        deliveries INTEGER NOT NULL DEFAULT 0,
                        maxAttempts INTEGER NOT NULL,
                        initialBackoff REAL NOT NULL,
                        backoffMultiplier INTEGER NOT NULL,
                        maxBackoff REAL NOT NULL,
                        timeout REAL,
                        enqueuedAt REAL NOT NULL,
                        startedAt REAL,
                        endedAt REAL,
                        lastErrorCode TEXT,
                        lastErrorMessage TEXT,
                        periodicInterval REAL,
                        scheduledAt REAL
                    );
                    CREATE UNIQUE INDEX job_uniqueName ON job(uniqueName)
                        WHERE uniqueName IS NOT NULL AND state IN ('pending', 'running');
                    CREATE INDEX job_claim ON job(state, priority DESC, id);
                    CREATE TABLE job_tag (
                        jobID INTEGER NOT NULL REFERENCES job(id) ON DELETE CASCADE,
                        tag TEXT NOT NULL,
                        PRIMARY KEY (jobID, tag)
                    );
                    CREATE INDEX job_tag_tag ON job_tag(tag);
                    CREATE TABLE job_edge (
                        beforeID INTEGER NOT NULL REFERENCES job(id) ON DELETE CASCADE,
                        afterID INTEGER NOT NULL REFERENCES job(id) ON DELETE CASCADE,
                        PRIMARY KEY (beforeID, afterID)
                    );
                    CREATE INDEX job_edge_after ON job_edge(afterID);
                    CREATE TABLE job_constraint (
                        jobID INTEGER NOT NULL REFERENCES job(id) ON DELETE CASCADE,
                        name TEXT NOT NULL,
                        PRIMARY KEY (jobID, name)
                    );
                    """)
        }
        return migrator
    }
}
