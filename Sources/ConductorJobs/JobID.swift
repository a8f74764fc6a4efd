/// A job's identity in its queue's file: the row id SQLite gave it, never reused.
///
/// ```swift
/// let id = try await queue.enqueue(PlaceOrder.self, order)
/// print(id)                      // "17"
/// let record = try await queue.ended(id)
/// ```
public struct JobID: Hashable, Sendable, Comparable, Codable, CustomStringConvertible {
    /// The row id.
    public let rawValue: Int64

    /// The job with row id `rawValue`.
    public init(rawValue: Int64) { self.rawValue = rawValue }

    public static func < (lhs: JobID, rhs: JobID) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String { "\(rawValue)" }
}
