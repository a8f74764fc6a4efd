import Conductor

/// The run as a self-contained page (`timeline.html`), drawn by the library's
/// `HTMLTimelineRenderer`: the demo's rows (start-up tasks, services, page calls, downloads)
/// in the story's order, the gate's waits over the calls' bars, and the milestone, ready and
/// refresh lines. What is the demo's own is here: which outcomes, waits and markers it has,
/// and their colours.
public enum TimelineHTML {
    static let fromCache = TimelineChart.Outcome(name: "from cache", colour: "#3b7dd8")
    static let parked = TimelineChart.Wait.Kind(name: "parked", label: "waiting for the refresh", outline: "#e8912d")
    static let queued = TimelineChart.Wait.Kind(name: "queued", label: "queued for a slot")

    static func markerKind(_ kind: Timeline.Marker.Kind) -> TimelineChart.Marker.Kind {
        switch kind {
        case .milestone: .milestone
        case .ready: .init(name: "ready", colour: "#0366d6")
        case .refresh: .init(name: "refresh", colour: "#e8912d")
        case .refreshFailed: .init(name: "refresh failed", colour: "#d64541")
        }
    }

    public static func render(_ report: DemoReport) -> String {
        HTMLTimelineRenderer().render(chart(report))
    }

    static func chart(_ report: DemoReport) -> TimelineChart {
        let timeline = report.timeline
        let rows = timeline.groups.flatMap { group in
            timeline.rows.filter { $0.group == group }.map { row in
                TimelineChart.Row(
                    group: row.group, name: row.name, start: row.start, end: row.end, outcome: outcome(row.outcome),
                    detail: row.detail,
                    waits: row.waits.map {
                        .init(kind: $0.kind == .parked ? parked : queued, start: $0.start, end: $0.end)
                    })
            }
        }
        return TimelineChart(
            title: "Conductor demo — \(report.options.scenario)", rows: rows,
            markers: timeline.markers.map { .init(kind: markerKind($0.kind), name: $0.name, at: $0.at, end: $0.end) },
            verdict: .init(passed: report.passed, text: report.verdict), notes: TextTimeline.summary(report))
    }

    static func outcome(_ outcome: Timeline.Outcome) -> TimelineChart.Outcome {
        switch outcome {
        case .succeeded: .succeeded
        case .fromCache: fromCache
        case .failed: .failed
        case .timedOut: .timedOut
        case .skipped: .skipped
        case .cancelled: .cancelled
        }
    }
}
