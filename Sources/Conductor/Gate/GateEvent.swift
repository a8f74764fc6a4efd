/// What a ``RequestGate`` did, in order: the seed's request states plus the refreshes.
///
/// ```swift
/// for await event in gate.events {
///     if case .redirect(let id, let version) = event { print("request \(id) parked (credential v\(version))") }
/// }
/// ```
///
/// Requests are named by id and by method and path without the query; no header, and so no
/// credential, ever appears in an event.
public enum GateEvent: Sendable, Hashable, CustomStringConvertible {
    /// A request entered the gate.
    case initial(request: UInt64, name: String, priority: PriorityScheduler.Priority)
    /// A caller joined a request already in flight with the same coalescing key.
    case coalesced(name: String)
    /// An attempt went on the wire, with this credential version.
    case running(request: UInt64, attempt: Int, credentialVersion: Int)
    /// The request will be sent again after `delay`.
    case retry(request: UInt64, attempt: Int, delay: Duration)
    /// The request was rejected for its credential and is parked until the refresh ends.
    case redirect(request: UInt64, credentialVersion: Int)
    /// The request ended with a response.
    case success(request: UInt64, status: Int)
    /// The request ended with an error.
    case failure(request: UInt64, code: GateError.Code)
    /// The request failed on the network and ended with a cached response.
    case useCache(request: UInt64)
    /// One refresh started, replacing credential `fromVersion`.
    case refreshStarted(fromVersion: Int)
    /// The refresh succeeded; credential `version` is current.
    case refreshSucceeded(version: Int)
    /// The refresh failed; every request parked behind it fails.
    case refreshFailed(fromVersion: Int)

    public var description: String {
        switch self {
        case .initial(let id, let name, let priority): "#\(id) initial \(name) [\(priority)]"
        case .coalesced(let name): "coalesced \(name)"
        case .running(let id, let attempt, let version): "#\(id) running attempt \(attempt) (credential v\(version))"
        case .retry(let id, let attempt, let delay): "#\(id) retry after attempt \(attempt) in \(delay)"
        case .redirect(let id, let version): "#\(id) redirect (credential v\(version) rejected)"
        case .success(let id, let status): "#\(id) success \(status)"
        case .failure(let id, let code): "#\(id) failure \(code)"
        case .useCache(let id): "#\(id) use-cache"
        case .refreshStarted(let version): "refresh started (replacing v\(version))"
        case .refreshSucceeded(let version): "refresh succeeded (v\(version))"
        case .refreshFailed(let version): "refresh failed (v\(version) kept)"
        }
    }
}
