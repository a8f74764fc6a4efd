/// What ``JobQueue/start()`` found in the file.
///
/// ```swift
/// let recovery = try await queue.start()
/// if !recovery.requeued.isEmpty { logger.notice("re-running \(recovery.requeued.count) interrupted jobs") }
/// for (kind, count) in recovery.unknownKinds { logger.warning("\(count) jobs of unknown kind \(kind) wait") }
/// ```
public struct JobQueueRecovery: Hashable, Sendable {
    /// Jobs found running: the process that ran them died (or shut down) before their end was
    /// recorded. They are pending again and run again, with the same idempotency key.
    public var requeued: [JobID]
    /// Pending jobs whose kind no handler is registered for, counted by kind. They stay pending,
    /// untouched, until a queue that registers their kind starts.
    public var unknownKinds: [String: Int]
}
