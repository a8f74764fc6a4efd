public import Foundation

/// A job as its queue's file records it: for inspection, never to change it.
///
/// ```swift
/// for record in try queue.jobs(in: .failed) {
///     print(record.id, record.kind, record.attempts, record.lastError?.message ?? "")
///     let order = try record.payload(as: PlaceOrder.self)
/// }
/// ```
public struct JobRecord: Hashable, Sendable {
    /// The job.
    public var id: JobID
    /// Its kind's name.
    public var kind: String
    /// Where it is now.
    public var state: JobState
    /// The encoded payload, as stored (JSON), kept after the job ends.
    public var payload: Data
    /// The key its handler sees on every attempt and delivery.
    public var idempotencyKey: String
    /// Attempts started, across deliveries.
    public var attempts: Int
    /// Times the job was claimed: 1 plus the times it was found running at start-up.
    public var deliveries: Int
    /// The attempts its retry policy allows.
    public var maxAttempts: Int
    /// Its tags.
    public var tags: Set<String>
    /// Its unique name, if it has one (a periodic job's name).
    public var uniqueName: String?
    /// Its priority.
    public var priority: TaskPriority
    /// When it may be claimed, if it was told.
    public var notBefore: Date?
    /// When it expires, if it does.
    public var expiresAt: Date?
    /// The jobs it runs after.
    public var after: [JobID]
    /// When it was enqueued.
    public var enqueuedAt: Date
    /// When it was last claimed.
    public var startedAt: Date?
    /// When it ended.
    public var endedAt: Date?
    /// Why it ended, unless it succeeded: the code and message recorded then
    /// (``JobQueueError/underlyingError`` is `nil`: the file keeps the message).
    public var lastError: JobQueueError?
    /// For an occurrence of a periodic job, the period.
    public var period: Duration?

    /// The payload decoded as `kind`'s.
    public func payload<Kind: JobKind>(as kind: Kind.Type) throws -> Kind.Payload {
        try JSONDecoder().decode(Kind.Payload.self, from: payload)
    }

    public static func == (lhs: JobRecord, rhs: JobRecord) -> Bool {
        lhs.id == rhs.id && lhs.state == rhs.state && lhs.attempts == rhs.attempts
            && lhs.deliveries == rhs.deliveries && lhs.endedAt == rhs.endedAt && lhs.lastError == rhs.lastError
            && lhs.payload == rhs.payload && lhs.tags == rhs.tags && lhs.startedAt == rhs.startedAt
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(state)
        hasher.combine(attempts)
        hasher.combine(deliveries)
    }
}
