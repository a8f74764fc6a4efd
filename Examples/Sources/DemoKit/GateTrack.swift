import Conductor

/// Follows a gate's events as they arrive and says what to show for each: a refresh starting
/// and ending, a call parked behind it. It also keeps, per call, when it waited — parked
/// behind the refresh or queued for a slot — for the timelines.
///
/// A pure value: ``take(_:at:)`` returns what to report, and the ``Recorder`` reports it.
///
/// ```swift
/// var track = GateTrack()
/// track.take(.refreshStarted(fromVersion: 1, request: 4), at: .milliseconds(300))  // → .refreshStarted(…)
/// ```
struct GateTrack: Sendable {
    enum Action: Equatable, Sendable {
        /// A refresh began: a row of the `network` group opens.
        case refreshStarted(name: String, at: Duration, startedBy: String)
        /// A call was parked behind the refresh.
        case parked(group: String, name: String, refresh: String, at: Duration)
        /// A refresh ended: its row and its marker.
        case refreshEnded(Timeline.Row, Timeline.Marker)
    }

    private struct Refresh: Sendable {
        var name: String
        var start: Duration
        var fromVersion: Int
        var parked = 0
    }

    /// The call each request was sent for, by request id.
    private var calls: [UInt64: String] = [:]
    /// The wait each request is in now.
    private var open: [UInt64: (kind: Timeline.Wait.Kind, since: Duration)] = [:]
    private var refresh: Refresh?
    private var refreshes = 0
    /// Every wait that ended, by call name.
    private(set) var waits: [String: [Timeline.Wait]] = [:]

    /// The page's and the media's calls by the gate's name for their request ("GET /comments");
    /// the first call wins where two share a flight.
    static let callOfRequest: [String: String] = {
        var calls: [String: String] = [:]
        for call in PageCatalog.basics + PageCatalog.sale + PageCatalog.shipping + PageCatalog.extras
            + PageCatalog.media where calls["GET \(call.path)"] == nil
        {
            calls["GET \(call.path)"] = call.name
        }
        return calls
    }()

    /// The group a call's row is drawn in.
    static func group(of call: String) -> String {
        ProductPage.stageOfTask[call] ?? (PageCatalog.media.contains { $0.name == call } ? "media" : "page")
    }

    mutating func take(_ event: GateEvent, at: Duration) -> Action? {
        if let id = event.request, let wait = open.removeValue(forKey: id), let call = calls[id] {
            waits[call, default: []].append(Timeline.Wait(kind: wait.kind, start: wait.since, end: at))
        }
        switch event {
        case .initial(let id, let name, _):
            calls[id] = Self.callOfRequest[name] ?? name
        case .queued(let id, _):
            open[id] = (.queued, at)
        // Rejected then parked, or parked before being sent: either way it waits for the refresh.
        case .redirect(let id, _), .parked(let id, _):
            open[id] = (.parked, at)
            guard var current = refresh else { return nil }
            current.parked += 1
            refresh = current
            let call = calls[id] ?? "#\(id)"
            return .parked(group: Self.group(of: call), name: call, refresh: current.name, at: at)
        case .refreshStarted(let version, let id):
            refreshes += 1
            let current = Refresh(name: "token refresh \(refreshes)", start: at, fromVersion: version)
            refresh = current
            let startedBy = id.map { calls[$0] ?? "#\($0)" } ?? "refresh()"
            return .refreshStarted(name: current.name, at: at, startedBy: startedBy)
        case .refreshSucceeded(let version):
            return endRefresh(at: at, outcome: .succeeded) { "POST /token · v\($0.fromVersion) → v\(version)" }
        case .refreshFailed:
            return endRefresh(at: at, outcome: .failed) { "POST /token · refused; v\($0.fromVersion) kept" }
        case .refreshCancelled:
            return endRefresh(at: at, outcome: .cancelled) { _ in "POST /token · cancelled" }
        default:
            break
        }
        return nil
    }

    private mutating func endRefresh(
        at: Duration, outcome: Timeline.Outcome, _ describe: (Refresh) -> String
    ) -> Action? {
        guard let current = refresh else { return nil }
        refresh = nil
        let waited = outcome == .failed ? "\(current.parked) parked calls failed" : "\(current.parked) calls waited"
        let row = Timeline.Row(
            group: "network", name: current.name, start: current.start, end: at, outcome: outcome,
            detail: "\(describe(current)) · \(waited)")
        let marker = Timeline.Marker(
            kind: outcome == .failed ? .refreshFailed : .refresh, name: current.name, at: current.start, end: at)
        return .refreshEnded(row, marker)
    }
}

extension GateEvent {
    /// The request the event is about, if it is about one.
    var request: UInt64? {
        switch self {
        case .initial(let id, _, _), .queued(let id, _), .running(let id, _, _), .retry(let id, _, _),
            .redirect(let id, _), .parked(let id, _), .success(let id, _), .failure(let id, _), .useCache(let id):
            id
        case .coalesced, .refreshStarted, .refreshSucceeded, .refreshFailed, .refreshCancelled,
            .refreshWindowExceeded, .signedIn, .signedOut:
            nil
        }
    }
}
