/// The business priority of a request (``RequestGate/send(_:body:priority:coalescingKey:timeout:authorization:retry:metadata:)``)
/// or of any work a ``PriorityScheduler`` runs.
///
/// Higher priorities go first; within a priority, work runs in submission order.
/// ``unique`` is not just "higher": it is an exclusive barrier, for work such as a token
/// refresh that everything else must wait for.
///
/// ```swift
/// let feed = try await gate.send(feedRequest, priority: .high)
/// try await scheduler.run(priority: .high) { try await loadVisibleRows() }
/// try await scheduler.run(priority: .unique) { try await refreshToken() }
/// ```
public enum RequestPriority: Int, Hashable, Sendable, CaseIterable, Comparable, CustomStringConvertible {
    /// Prefetching and other work nobody is waiting for. Aging still lets it run.
    case low
    /// Ordinary work.
    case `default`
    /// Work a user is waiting for.
    case high
    /// Exclusive: waits for running work to finish, then runs alone while everything
    /// submitted meanwhile waits. Two `unique` jobs never run at once, and a concurrency
    /// limit never holds one back.
    case unique

    public static func < (lhs: RequestPriority, rhs: RequestPriority) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String {
        switch self {
        case .low: "low"
        case .default: "default"
        case .high: "high"
        case .unique: "unique"
        }
    }
}
