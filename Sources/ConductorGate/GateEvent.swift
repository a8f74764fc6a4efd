/// What a ``RequestGate`` did, in order: each request's progress, and the refreshes.
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
    case initial(request: UInt64, name: String, priority: RequestPriority)
    /// A caller joined a request already in flight with the same coalescing key.
    case coalesced(name: String)
    /// An attempt is waiting for a slot (the concurrency limit, a `unique` barrier or
    /// higher lanes hold it back), in this lane.
    case queued(request: UInt64, priority: RequestPriority)
    /// An attempt went on the wire, with this credential version.
    case running(request: UInt64, attempt: Int, credentialVersion: Int)
    /// The request will be sent again after `delay`.
    case retry(request: UInt64, attempt: Int, delay: Duration)
    /// The server rejected credential `credentialVersion` of the request, which is parked
    /// until the refresh that replaces it ends.
    case redirect(request: UInt64, credentialVersion: Int)
    /// The request is parked, without having been sent with credential `credentialVersion`,
    /// until the refresh that replaces it ends: a refresh was running when it reached its slot,
    /// the credential was judged stale before sending, or the gate had no credential yet.
    case parked(request: UInt64, credentialVersion: Int)
    /// The request ended with a response.
    case success(request: UInt64, status: Int)
    /// The request ended with an error.
    case failure(request: UInt64, code: GateError.Code)
    /// The request failed on the network and ended with a cached response.
    case useCache(request: UInt64)
    /// One refresh started, replacing credential `fromVersion`; `request` is the request
    /// whose rejection (or stale credential, or, with no credential yet, whose first attempt)
    /// started it, `nil` for ``RequestGate/refresh()``. From this event on, no request goes
    /// out with credential `fromVersion`.
    case refreshStarted(fromVersion: Int, request: UInt64?)
    /// The refresh succeeded; credential `version` is current.
    case refreshSucceeded(version: Int)
    /// The refresh failed or missed its deadline; every request parked behind it fails.
    case refreshFailed(fromVersion: Int)
    /// A sign-in, sign-out or shutdown cancelled the refresh; its result, if it comes, is
    /// discarded.
    case refreshCancelled(fromVersion: Int)
    /// A rejection would have started a refresh beyond ``GateConfiguration/refreshWindow``:
    /// `refreshes` ran within `period` already.
    case refreshWindowExceeded(refreshes: Int, period: Duration)
    /// ``RequestGate/signIn(_:)`` made credential `version` current.
    case signedIn(version: Int)
    /// ``RequestGate/signOut()`` cleared the credential.
    case signedOut

    public var description: String {
        switch self {
        case .initial(let id, let name, let priority): "#\(id) initial \(name) [\(priority)]"
        case .coalesced(let name): "coalesced \(name)"
        case .running(let id, let attempt, let version): "#\(id) running attempt \(attempt) (credential v\(version))"
        case .retry(let id, let attempt, let delay):
            "#\(id) retry after attempt \(attempt) in \(delay.shortDescription)"
        case .redirect(let id, let version): "#\(id) redirect (credential v\(version) rejected)"
        case .parked(let id, let version): "#\(id) parked (waiting for the refresh of credential v\(version))"
        case .success(let id, let status): "#\(id) success \(status)"
        case .failure(let id, let code): "#\(id) failure \(code)"
        case .useCache(let id): "#\(id) use-cache"
        case .queued(let id, let priority): "#\(id) queued [\(priority)]"
        case .refreshStarted(let version, let id?): "refresh started by #\(id) (replacing v\(version))"
        case .refreshStarted(let version, nil): "refresh started on request (replacing v\(version))"
        case .refreshSucceeded(let version): "refresh succeeded (v\(version))"
        case .refreshFailed(let version): "refresh failed (v\(version) kept)"
        case .refreshCancelled(let version): "refresh cancelled (replacing v\(version))"
        case .refreshWindowExceeded(let refreshes, let period):
            "refresh refused: \(refreshes) within \(period.shortDescription)"
        case .signedIn(let version): "signed in (v\(version))"
        case .signedOut: "signed out"
        }
    }
}
