import Conductor

/// What the request gate did, counted from its events.
public struct NetworkSummary: Sendable {
    /// Requests that entered the gate (a caller joining a shared flight is not one).
    public var requests = 0
    /// Attempts that went on the wire.
    public var sent = 0
    public var refreshes = 0
    public var failedRefreshes = 0
    public var retries = 0
    /// Requests parked while the token was refreshed.
    public var parked = 0
    /// Callers that joined a flight already on its way.
    public var coalesced = 0
    public var servedFromCache = 0
    public var failed = 0
    /// How many times each request ended (success, failure or cache): exactly once each.
    public var endings: [UInt64: Int] = [:]

    /// Whether every request that entered the gate ended exactly once.
    public var everyRequestEndedOnce: Bool {
        endings.count == requests && endings.values.allSatisfy { $0 == 1 }
    }

    init(_ log: [(at: Duration, event: GateEvent)]) {
        for (_, event) in log {
            switch event {
            case .initial(let id, _, _):
                requests += 1
                endings[id] = endings[id] ?? 0
            case .coalesced: coalesced += 1
            case .running: sent += 1
            case .retry: retries += 1
            case .redirect, .parked: parked += 1
            case .success(let id, _): endings[id, default: 0] += 1
            case .failure(let id, _):
                failed += 1
                endings[id, default: 0] += 1
            case .useCache(let id):
                servedFromCache += 1
                endings[id, default: 0] += 1
            case .refreshStarted: refreshes += 1
            case .refreshSucceeded, .refreshCancelled, .refreshWindowExceeded, .queued, .signedIn, .signedOut: break
            case .refreshFailed: failedRefreshes += 1
            }
        }
    }
}
