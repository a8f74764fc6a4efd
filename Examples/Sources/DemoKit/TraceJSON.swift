public import Foundation

/// The whole demo as Chrome trace events (`trace.json`): open it in Perfetto
/// (ui.perfetto.dev) or chrome://tracing. Each group is a thread; each task a complete event;
/// milestones and refreshes are instant events.
///
/// The library's ``ChromeTrace`` draws one run's report; this trace puts start-up, the
/// services, the page, the downloads and the gate's refresh on one axis, which no single
/// report holds. The demo also writes the library's traces of the launch and the page.
public enum TraceJSON {
    private struct Event: Encodable {
        var name: String
        var cat: String
        var ph: String
        var ts: Int64
        var dur: Int64?
        var pid = 1
        var tid: Int
        var s: String?
        var args: [String: String]
    }

    private struct Trace: Encodable {
        var traceEvents: [Event]
        var displayTimeUnit = "ms"
    }

    public static func render(_ timeline: Timeline, title: String) throws -> Data {
        let groups = timeline.groups
        var events: [Event] = [
            Event(name: "process_name", cat: "__metadata", ph: "M", ts: 0, tid: 0, args: ["name": title])
        ]
        for (index, group) in groups.enumerated() {
            events.append(
                Event(name: "thread_name", cat: "__metadata", ph: "M", ts: 0, tid: index + 1, args: ["name": group]))
            events.append(
                Event(
                    name: "thread_sort_index", cat: "__metadata", ph: "M", ts: 0, tid: index + 1,
                    args: ["sort_index": "\(index)"]))
        }
        for row in timeline.rows {
            let tid = (groups.firstIndex(of: row.group) ?? 0) + 1
            events.append(
                Event(
                    name: row.name, cat: row.outcome.rawValue, ph: "X", ts: row.start.microseconds,
                    dur: max(1, (row.end - row.start).microseconds), tid: tid,
                    args: ["outcome": row.outcome.rawValue, "detail": row.detail]))
        }
        for marker in timeline.markers {
            events.append(
                Event(
                    name: "\(marker.kind.rawValue): \(marker.name)", cat: marker.kind.rawValue, ph: "i",
                    ts: marker.at.microseconds, tid: 0, s: "g", args: [:]))
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(Trace(traceEvents: events))
    }
}
