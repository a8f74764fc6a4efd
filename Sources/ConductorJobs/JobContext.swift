/// What a job's handler knows about the job it runs.
///
/// ```swift
/// import Foundation
/// import HTTPTypes
///
/// queue.register(PlaceOrder.self) { order, context in
///     var request = HTTPRequest(method: .post, scheme: "https", authority: "shop.example", path: "/orders")
///     request.headerFields[.idempotencyKey] = context.idempotencyKey
///     _ = try await gate.send(request, body: .bytes(try JSONEncoder().encode(order)))
/// }
/// ```
///
/// The idempotency key is what makes a job's effect happen once: the handler can run more than
/// once (a retry, or a re-run after the process died before its end was recorded), always with
/// the same key, and a server that de-duplicates by it applies the effect once.
public struct JobContext: Sendable {
    /// The job.
    public let id: JobID
    /// The job's kind name.
    public let kind: String
    /// Made when the job was enqueued, kept in the file, the same on every attempt and every
    /// delivery, across restarts.
    public let idempotencyKey: String
    /// The attempt, from 1, counted across deliveries: a job whose first delivery made 2
    /// attempts before the process died starts its second delivery at attempt 3.
    public let attempt: Int
    /// 1, plus how many times the job was found running at start-up (its process died while it
    /// ran, or the queue was shut down while it ran).
    public let delivery: Int
}
