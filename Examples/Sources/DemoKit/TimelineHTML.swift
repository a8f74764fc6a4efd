/// The run as a self-contained page (`timeline.html`): an SVG Gantt chart with one bar per
/// task, grouped, coloured by outcome, milestone lines, the refresh marked, and hover titles
/// with timings. No scripts and no external resources; written as XHTML, so it parses as XML.
public enum TimelineHTML {
    static let labelWidth = 190.0
    static let chartWidth = 860.0
    static let rowHeight = 20.0
    static let groupGap = 26.0
    /// Room above the rows for the top axis and two lines of marker labels.
    static let top = 60.0

    static let colours: [Timeline.Outcome: String] = [
        .succeeded: "#2f9e5b", .fromCache: "#3b7dd8", .failed: "#d64541", .timedOut: "#e8912d",
        .skipped: "#9aa0a6", .cancelled: "#b8bcc2",
    ]

    public static func render(_ report: DemoReport) -> String {
        let timeline = report.timeline
        let total = max(timeline.end.milliseconds, 1)
        let scale = chartWidth / total
        func x(_ time: Duration) -> Double { labelWidth + time.milliseconds * scale }

        var body: [String] = []
        var y = top
        for group in timeline.groups {
            let rows = timeline.rows.filter { $0.group == group }
            let height = groupGap + Double(rows.count) * rowHeight
            body.append(#"<g class="group" data-group="\#(escape(group))">"#)
            body.append(
                #"<rect class="band" x="0" y="\#(f(y))" width="\#(f(labelWidth + chartWidth + 20))" height="\#(f(height - 4))"/>"#
            )
            body.append(#"<text class="group-label" x="8" y="\#(f(y + 16))">\#(escape(group))</text>"#)
            var rowY = y + groupGap
            for row in rows {
                let width = max(2, x(row.end) - x(row.start))
                let title =
                    "\(row.name) — \(row.outcome.rawValue), \(row.start.shortDescription) → \(row.end.shortDescription) "
                    + "(\((row.end - row.start).shortDescription))" + (row.detail.isEmpty ? "" : "\n\(row.detail)")
                body.append(
                    #"<g class="task" data-task="\#(escape(row.name))" data-outcome="\#(row.outcome.rawValue)">"#)
                body.append("<title>\(escape(title))</title>")
                body.append(#"<text class="task-label" x="20" y="\#(f(rowY + 13))">\#(escape(row.name))</text>"#)
                body.append(
                    #"<rect class="bar" x="\#(f(x(row.start)))" y="\#(f(rowY + 3))" width="\#(f(width))" height="\#(f(rowHeight - 6))" rx="3" fill="\#(colours[row.outcome]!)"/>"#
                )
                // Waiting in the gate is drawn over the bar: the call was not on the wire then.
                for wait in row.waits where wait.end > wait.start {
                    let kind = wait.kind == .parked ? "parked" : "queued"
                    let title =
                        "\(row.name) \(wait.kind.rawValue) \(wait.start.shortDescription) → \(wait.end.shortDescription)"
                    body.append(
                        #"<rect class="wait \#(kind)" x="\#(f(x(wait.start)))" y="\#(f(rowY + 3))" width="\#(f(max(1, x(wait.end) - x(wait.start))))" height="\#(f(rowHeight - 6))"><title>\#(escape(title))</title></rect>"#
                    )
                }
                body.append("</g>")
                rowY += rowHeight
            }
            body.append("</g>")
            y += height
        }
        let height = y + 10
        var overlay: [String] = []
        // Labels of markers close together go on alternate lines instead of on top of each other.
        var labelLineEnds = [-Double.infinity, -Double.infinity]
        for marker in timeline.markers.sorted(by: { $0.at < $1.at }) {
            let labelX = x(marker.at) + 3
            let line = labelX > labelLineEnds[0] ? 0 : (labelX > labelLineEnds[1] ? 1 : 0)
            labelLineEnds[line] = labelX + Double(marker.name.count) * 6.5 + 6
            let title =
                "\(marker.label) at \(marker.at.shortDescription)"
                + (marker.end.map { " – \($0.shortDescription)" } ?? "")
            let kind = marker.kind.rawValue.replacingSpaces
            overlay.append(#"<g class="marker \#(kind)" data-name="\#(escape(marker.name))">"#)
            overlay.append("<title>\(escape(title))</title>")
            if let end = marker.end {
                overlay.append(
                    #"<rect class="span" x="\#(f(x(marker.at)))" y="\#(f(top - 6))" width="\#(f(max(2, x(end) - x(marker.at))))" height="\#(f(height - top))"/>"#
                )
            }
            overlay.append(
                #"<line x1="\#(f(x(marker.at)))" y1="\#(f(top - 14 - Double(line) * 13))" x2="\#(f(x(marker.at)))" y2="\#(f(height))"/>"#
            )
            overlay.append(
                #"<text x="\#(f(labelX))" y="\#(f(top - 16 - Double(line) * 13))">\#(escape(marker.name))</text>"#)
            overlay.append("</g>")
        }
        // The time axis at the top and at the bottom: a long page keeps its scale in view.
        var axis: [String] = []
        var topLabels: [String] = []
        var bottomLabels: [String] = []
        let step = tickStep(total)
        var tick = 0.0
        while tick <= total + 0.5 {
            let tx = labelWidth + tick * scale
            let label = Duration.milliseconds(Int(tick)).shortDescription
            axis.append(#"<line class="tick" x1="\#(f(tx))" y1="\#(f(top - 36))" x2="\#(f(tx))" y2="\#(f(height))"/>"#)
            topLabels.append(#"<text class="tick-label" x="\#(f(tx))" y="\#(f(12))">\#(label)</text>"#)
            bottomLabels.append(#"<text class="tick-label" x="\#(f(tx))" y="\#(f(height + 14))">\#(label)</text>"#)
            tick += step
        }
        axis.append(#"<g class="axis top">"# + topLabels.joined() + "</g>")
        axis.append(#"<g class="axis bottom">"# + bottomLabels.joined() + "</g>")
        let svgWidth = labelWidth + chartWidth + 110  // room for a label on a marker at the very end
        let svg = """
            <svg xmlns="http://www.w3.org/2000/svg" class="gantt" width="100%" viewBox="0 0 \(f(svgWidth)) \(f(height + 24))" preserveAspectRatio="xMinYMin meet">
            \(axis.joined(separator: "\n"))
            \(body.joined(separator: "\n"))
            \(overlay.joined(separator: "\n"))
            </svg>
            """
        let legend =
            Timeline.Outcome.allCases.map {
                #"<span class="key"><span class="swatch" style="background:\#(colours[$0]!)"></span>\#($0.rawValue)</span>"#
            }.joined(separator: " ")
            + #" <span class="key"><span class="swatch parked"></span>waiting for the refresh</span>"#
            + #" <span class="key"><span class="swatch queued"></span>queued for a slot</span>"#
        let title = "Conductor demo — \(report.options.scenario)"
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE html>
            <html xmlns="http://www.w3.org/1999/xhtml" lang="en">
            <head>
            <meta charset="utf-8"/>
            <title>\(escape(title))</title>
            <style>
            body { font: 14px/1.4 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 24px; color: #1f2328; background: #fff; }
            h1 { font-size: 20px; margin: 0 0 4px; }
            .verdict { font-size: 15px; padding: 8px 12px; border-radius: 6px; margin: 8px 0 16px; }
            .verdict.pass { background: #e6f4ea; } .verdict.fail { background: #fdecea; }
            .gantt { display: block; width: 100%; height: auto; }
            .gantt text { font-size: 12px; fill: #1f2328; }
            .gantt .group-label { font-weight: 600; font-size: 13px; }
            .gantt .band { fill: #f6f8fa; }
            .gantt .tick { stroke: #e1e4e8; stroke-width: 1; }
            .gantt .tick-label { fill: #6a737d; text-anchor: middle; font-size: 11px; }
            .gantt .task:hover .bar { stroke: #1f2328; stroke-width: 1.5; }
            .gantt .wait { fill: #fff; fill-opacity: 0.7; stroke-width: 1; }
            .gantt .wait.parked { stroke: #e8912d; stroke-dasharray: 3 2; }
            .gantt .wait.queued { fill-opacity: 0.45; stroke: none; }
            .swatch.parked { background: #fff; border: 1px dashed #e8912d; } .swatch.queued { background: #c8e6d2; }
            .gantt .marker line { stroke-width: 1.5; stroke-dasharray: 4 3; }
            .gantt .marker text { font-size: 11px; font-weight: 600; }
            .gantt .milestone line { stroke: #6f42c1; } .gantt .milestone text { fill: #6f42c1; }
            .gantt .ready line { stroke: #0366d6; } .gantt .ready text { fill: #0366d6; }
            .gantt .refresh line { stroke: #e8912d; } .gantt .refresh text { fill: #b86e12; }
            .gantt .refresh .span { fill: #e8912d; fill-opacity: 0.12; }
            .gantt .refresh-failed line { stroke: #d64541; } .gantt .refresh-failed text { fill: #d64541; }
            .gantt .refresh-failed .span { fill: #d64541; fill-opacity: 0.12; }
            .legend { margin: 8px 0 16px; } .key { margin-right: 14px; white-space: nowrap; }
            .swatch { display: inline-block; width: 12px; height: 12px; border-radius: 2px; margin-right: 5px; vertical-align: -1px; }
            pre { background: #f6f8fa; padding: 12px; border-radius: 6px; font-size: 12px; }
            </style>
            </head>
            <body>
            <h1>\(escape(title))</h1>
            <p class="verdict \(report.passed ? "pass" : "fail")">\(report.passed ? "✔" : "✘") \(escape(report.verdict))</p>
            <div class="legend">\(legend) <span class="key">┆ milestone, ready and refresh lines; hover a bar for its timings</span></div>
            \(svg)
            <pre>\(escape(TextTimeline.summary(report)))</pre>
            </body>
            </html>

            """
    }

    /// A round step giving five to ten ticks.
    static func tickStep(_ total: Double) -> Double {
        for step in [50.0, 100, 200, 250, 500, 1000, 2000, 5000] where total / step <= 10 { return step }
        return 10_000
    }

    static func f(_ value: Double) -> String {
        let rounded = (value * 10).rounded() / 10
        return rounded == rounded.rounded() ? "\(Int(rounded))" : "\(rounded)"
    }

    static func escape(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&apos;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}

extension String {
    fileprivate var replacingSpaces: String { String(map { $0 == " " ? "-" : $0 }) }
}
