/// Everything the demo did, on one time axis (offsets from the demo's start): what the text
/// timeline, `trace.json` and `timeline.html` are drawn from.
public struct Timeline: Sendable {
    /// How a row ended; the colour of its bar.
    public enum Outcome: String, Sendable, CaseIterable {
        case succeeded
        case fromCache = "from cache"
        case failed
        case timedOut = "timed out"
        case skipped, cancelled
    }

    /// One task: a start-up task, a service's creation, a page call or a download.
    public struct Row: Sendable, Equatable {
        /// The group it is drawn in: `launch`, `services`, a stage's name, `media`, `network`.
        public var group: String
        public var name: String
        public var start: Duration
        public var end: Duration
        public var outcome: Outcome
        /// What happened, for hover titles: the request, its lane, the answer.
        public var detail: String
        /// When its request waited in the gate: queued for a slot, parked behind a refresh.
        public var waits: [Wait] = []
    }

    /// A stretch of a row's time spent waiting in the request gate, not on the wire.
    public struct Wait: Sendable, Equatable {
        public enum Kind: String, Sendable, CaseIterable {
            /// Parked behind the token refresh (the gate's `redirect`).
            case parked = "waiting for the refresh"
            /// Waiting for a slot: the concurrency limit or higher lanes held it back.
            case queued = "queued for a slot"
        }
        public var kind: Kind
        public var start: Duration
        public var end: Duration
    }

    /// A moment worth a vertical line: a milestone, the app being ready, a refresh.
    public struct Marker: Sendable, Equatable {
        public enum Kind: String, Sendable {
            case milestone, ready, refresh
            case refreshFailed = "refresh failed"
        }
        public var kind: Kind
        public var name: String
        public var at: Duration
        /// For a refresh: when it ended.
        public var end: Duration?

        /// "milestone firstScreen", or just "ready" where the name would repeat the kind.
        public var label: String {
            name == kind.rawValue ? name : "\(kind.rawValue) \(name)"
        }
    }

    public internal(set) var rows: [Row] = []
    public internal(set) var markers: [Marker] = []

    /// The groups in the story's order: start-up, services, the page's stages, media, network;
    /// any other group after them in the order its first row appears.
    public var groups: [String] {
        let order = ["launch", "services", "basics", "sale", "shipping", "extras", "media", "network"]
        var seen: Set<String> = []
        let present = rows.map(\.group).filter { seen.insert($0).inserted }
        return order.filter(seen.contains) + present.filter { !order.contains($0) }
    }

    /// When the last thing ended.
    public var end: Duration {
        max(rows.map(\.end).max() ?? .zero, markers.map { $0.end ?? $0.at }.max() ?? .zero)
    }
}

extension Duration {
    /// Milliseconds, for display.
    var milliseconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) * 1000 + Double(attoseconds) / 1e15
    }

    /// Microseconds, for Chrome trace events.
    var microseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
    }

    /// "412 ms" or "1.24 s".
    var shortDescription: String {
        let ms = milliseconds
        if ms < 1000 { return "\(Int(ms.rounded())) ms" }
        return "\((ms / 10).rounded() / 100) s"
    }
}
