/// The run as text: one row per task, grouped, with milestones and refreshes marked, then
/// the summary.
public enum TextTimeline {
    static let barWidth = 56
    static let nameWidth = 22

    /// The timeline's rows as bars over a shared time axis.
    public static func render(_ timeline: Timeline) -> String {
        let total = max(timeline.end.milliseconds, 1)
        func column(_ time: Duration) -> Int {
            min(barWidth - 1, max(0, Int((time.milliseconds / total * Double(barWidth)).rounded(.down))))
        }
        let markerColumns = timeline.markers.map { (column($0.at), $0.kind) }
        var lines: [String] = []
        lines.append(pad("", nameWidth + 2) + pad("0", barWidth - 4) + timeline.end.shortDescription)
        for group in timeline.groups {
            lines.append(group)
            for row in timeline.rows where row.group == group {
                var cells = Array(repeating: Character("·"), count: barWidth)
                for (markerColumn, kind) in markerColumns {
                    cells[markerColumn] = kind == .milestone || kind == .ready ? "│" : "¦"
                }
                let (from, to) = (column(row.start), max(column(row.start), column(row.end)))
                for index in from...to { cells[index] = symbol(row.outcome) }
                // Time spent waiting in the gate shows as waiting, not as work on the wire.
                for wait in row.waits where column(wait.end) > column(wait.start) {
                    for index in column(wait.start)..<column(wait.end) { cells[index] = symbol(wait.kind) }
                }
                let timing = "\(row.start.shortDescription) +\((row.end - row.start).shortDescription)"
                let outcome = row.outcome == .succeeded ? "" : "  \(row.outcome.rawValue)"
                lines.append("  " + pad(row.name, nameWidth) + String(cells) + "  " + timing + outcome + waited(row))
            }
        }
        lines.append("")
        lines.append("  █ succeeded  ▓ from cache  ✕ failed  ! timed out  - skipped/cancelled")
        lines.append("  ░ waiting for the refresh  ▒ queued for a slot   │ milestone  ¦ refresh")
        lines.append(contentsOf: wordsLegend)
        for marker in timeline.markers.sorted(by: { $0.at < $1.at }) {
            let span = marker.end.map { " – \($0.shortDescription)" } ?? ""
            lines.append(
                "  \(marker.kind == .milestone ? "◆" : "◇") \(marker.label) at \(marker.at.shortDescription)\(span)"
            )
        }
        return lines.joined(separator: "\n")
    }

    /// The summary: launch time, milestones, what the network did, the critical path.
    public static func summary(_ report: DemoReport) -> String {
        let network = report.network
        var lines = ["Summary"]
        func line(_ label: String, _ value: String) { lines.append("  " + pad(label, 18) + value) }
        line("launch", report.launchTime.shortDescription + " until ready")
        for milestone in report.milestones { line(milestone.name, milestone.at.shortDescription) }
        if report.milestones.count < 2 { line("page", "\(report.pageOutcome)") }
        line("requests sent", "\(network.sent) attempts for \(network.requests) requests")
        line("refreshes", "\(network.refreshes) (\(network.failedRefreshes) refused), \(network.parked) calls waited")
        line("retries", "\(network.retries)")
        line("coalesced calls", "\(network.coalesced)")
        line("from cache", "\(report.pageCallsFromCache) of \(report.pageCalls) page calls")
        line("media", report.media.isEmpty ? "-" : report.media)
        line("requests ended", network.everyRequestEndedOnce ? "exactly once" : "NOT exactly once")
        line("critical path", report.criticalPath.joined(separator: " → "))
        return lines.joined(separator: "\n")
    }

    static func symbol(_ kind: Timeline.Wait.Kind) -> Character {
        switch kind {
        case .parked: "░"
        case .queued: "▒"
        }
    }

    /// "  waited 120 ms" when the row's request waited behind a refresh.
    static func waited(_ row: Timeline.Row) -> String {
        let parked = row.waits.filter { $0.kind == .parked }.reduce(Duration.zero) { $0 + ($1.end - $1.start) }
        return parked > .zero ? "  waited \(parked.shortDescription)" : ""
    }

    static func symbol(_ outcome: Timeline.Outcome) -> Character {
        switch outcome {
        case .succeeded: "█"
        case .fromCache: "▓"
        case .failed: "✕"
        case .timedOut: "!"
        case .skipped, .cancelled: "-"
        }
    }

    /// The three words the output counts work in, defined once here.
    static let wordsLegend = [
        "  call: one of the page's tasks that asks the server for data",
        "  request: what the gate handles for a call (calls sharing a flight share one)",
        "  attempt: one send of a request (a retry or a re-send after a refresh adds one)",
    ]

    static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width
            ? String(text.prefix(width - 1)) + " " : text + String(repeating: " ", count: width - text.count)
    }
}
