/// Draws a run as a self-contained web page: an SVG Gantt chart with one bar per task,
/// grouped, coloured by outcome, milestone lines and the time axis at the top and bottom,
/// with each bar's timings on hover.
///
/// ```swift
/// import Foundation
///
/// let page = HTMLTimelineRenderer().render(try await launcher.report(), title: "MyApp launch")
/// try page.write(to: URL(filePath: "launch.html"), atomically: true, encoding: .utf8)
/// ```
///
/// The page has no scripts and loads nothing from outside, so it opens from a CI artifact or
/// an attachment as it is; it is written as XHTML, so it also parses as XML for a test. To
/// draw more than one run on a page, or work that is not a task, build a ``TimelineChart``.
///
/// - Complexity: O(rows + markers).
public struct HTMLTimelineRenderer: Sendable {
    private let labelWidth = 190.0
    private let chartWidth = 860.0
    private let rowHeight = 20.0
    private let groupGap = 26.0
    /// Room above the rows for the top axis and two lines of marker labels.
    private let top = 60.0

    public init() {}

    /// The report as a page: ``TimelineChart/init(_:title:)-(RunReport,_)`` drawn by ``render(_:)-(TimelineChart)``.
    public func render(_ report: RunReport, title: String = "Conductor run") -> String {
        render(TimelineChart(report, title: title))
    }

    /// A launch's report as a page, its undos in the notes once it has been shut down.
    public func render(_ report: LaunchReport, title: String = "Conductor run") -> String {
        render(TimelineChart(report, title: title))
    }

    public func render(_ chart: TimelineChart) -> String {
        let total = max(chart.end.milliseconds, 1)
        let scale = chartWidth / total
        func x(_ time: Duration) -> Double { labelWidth + time.milliseconds * scale }

        var body: [String] = []
        var y = top
        for group in chart.groups {
            let rows = chart.rows.filter { $0.group == group }
            let height = groupGap + Double(rows.count) * rowHeight
            body.append(#"<g class="group" data-group="\#(escape(group))">"#)
            body.append(
                #"<rect class="band" x="0" y="\#(f(y))" width="\#(f(labelWidth + chartWidth + 20))" height="\#(f(height - 4))"/>"#
            )
            body.append(#"<text class="group-label" x="8" y="\#(f(y + 16))">\#(escape(group))</text>"#)
            var rowY = y + groupGap
            for row in rows {
                body.append(contentsOf: self.row(row, y: rowY, x: x))
                rowY += rowHeight
            }
            body.append("</g>")
            y += height
        }
        let height = y + 10
        let svgWidth = labelWidth + chartWidth + 110  // room for a label on a marker at the very end
        let svg = """
            <svg xmlns="http://www.w3.org/2000/svg" class="gantt" width="100%" viewBox="0 0 \(f(svgWidth)) \(f(height + 24))" preserveAspectRatio="xMinYMin meet">
            \(axis(total: total, scale: scale, height: height).joined(separator: "\n"))
            \(body.joined(separator: "\n"))
            \(markers(chart.markers, height: height, x: x).joined(separator: "\n"))
            </svg>
            """
        let verdict =
            chart.verdict.map {
                #"<p class="verdict \#($0.passed ? "pass" : "fail")">\#($0.passed ? "✔" : "✘") \#(escape($0.text))</p>"#
            } ?? ""
        let notes = chart.notes.map { "<pre>\(escape($0))</pre>" } ?? ""
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE html>
            <html xmlns="http://www.w3.org/1999/xhtml" lang="en">
            <head>
            <meta charset="utf-8"/>
            <title>\(escape(chart.title))</title>
            <style>
            \(Self.style)
            </style>
            </head>
            <body>
            <h1>\(escape(chart.title))</h1>
            \(verdict)
            <div class="legend">\(legend(chart)) <span class="key">┆ markers; hover a bar for its timings</span></div>
            \(svg)
            \(notes)
            </body>
            </html>

            """
    }

    private func row(_ row: TimelineChart.Row, y: Double, x: (Duration) -> Double) -> [String] {
        let width = max(2, x(row.end) - x(row.start))
        let title =
            "\(row.name) — \(row.outcome.name), \(row.start.shortDescription) → \(row.end.shortDescription) "
            + "(\((row.end - row.start).shortDescription))" + (row.detail.isEmpty ? "" : "\n\(row.detail)")
        var lines = [
            #"<g class="task\#(row.isCritical ? " critical" : "")" data-task="\#(escape(row.name))" data-outcome="\#(escape(row.outcome.name))">"#,
            "<title>\(escape(title))</title>",
            #"<text class="task-label" x="\#(f(20 + 12 * Double(row.depth)))" y="\#(f(y + 13))">\#(escape(row.name))</text>"#,
            #"<rect class="bar" x="\#(f(x(row.start)))" y="\#(f(y + 3))" width="\#(f(width))" height="\#(f(rowHeight - 6))" rx="3" fill="\#(escape(row.outcome.colour))"/>"#,
        ]
        // Waiting is drawn over the bar, pale: the work was not being done then.
        for wait in row.waits where wait.end > wait.start {
            let title =
                "\(row.name) \(wait.kind.label) \(wait.start.shortDescription) → \(wait.end.shortDescription)"
            lines.append(
                #"<rect \#(waitLook(wait.kind)) x="\#(f(x(wait.start)))" y="\#(f(y + 3))" width="\#(f(max(1, x(wait.end) - x(wait.start))))" height="\#(f(rowHeight - 6))"><title>\#(escape(title))</title></rect>"#
            )
        }
        lines.append("</g>")
        return lines
    }

    private func markers(_ markers: [TimelineChart.Marker], height: Double, x: (Duration) -> Double) -> [String] {
        var lines: [String] = []
        // Labels of markers close together go on alternate lines instead of on top of each other.
        var labelLineEnds = [-Double.infinity, -Double.infinity]
        for marker in markers.sorted(by: { $0.at < $1.at }) {
            let labelX = x(marker.at) + 3
            let line = labelX > labelLineEnds[0] ? 0 : (labelX > labelLineEnds[1] ? 1 : 0)
            labelLineEnds[line] = labelX + Double(marker.name.count) * 6.5 + 6
            let title =
                "\(marker.label) at \(marker.at.shortDescription)"
                + (marker.end.map { " – \($0.shortDescription)" } ?? "")
            let colour = escape(marker.kind.colour)
            lines.append(
                #"<g class="marker \#(escape(marker.kind.name.replacingSpaces))" data-name="\#(escape(marker.name))">"#)
            lines.append("<title>\(escape(title))</title>")
            if let end = marker.end {
                lines.append(
                    #"<rect class="span" x="\#(f(x(marker.at)))" y="\#(f(top - 6))" width="\#(f(max(2, x(end) - x(marker.at))))" height="\#(f(height - top))" fill="\#(colour)"/>"#
                )
            }
            lines.append(
                #"<line x1="\#(f(x(marker.at)))" y1="\#(f(top - 14 - Double(line) * 13))" x2="\#(f(x(marker.at)))" y2="\#(f(height))" stroke="\#(colour)"/>"#
            )
            lines.append(
                #"<text x="\#(f(labelX))" y="\#(f(top - 16 - Double(line) * 13))" fill="\#(colour)">\#(escape(marker.name))</text>"#
            )
            lines.append("</g>")
        }
        return lines
    }

    /// The time axis at the top and at the bottom: a long page keeps its scale in view.
    private func axis(total: Double, scale: Double, height: Double) -> [String] {
        var lines: [String] = []
        var topLabels: [String] = []
        var bottomLabels: [String] = []
        let step = Self.tickStep(total)
        var tick = 0.0
        while tick <= total + step / 100 {
            let tx = labelWidth + tick * scale
            let label = tick == 0 ? "0" : Duration.nanoseconds(Int64((tick * 1_000_000).rounded())).shortDescription
            lines.append(#"<line class="tick" x1="\#(f(tx))" y1="\#(f(top - 36))" x2="\#(f(tx))" y2="\#(f(height))"/>"#)
            topLabels.append(#"<text class="tick-label" x="\#(f(tx))" y="\#(f(12))">\#(label)</text>"#)
            bottomLabels.append(#"<text class="tick-label" x="\#(f(tx))" y="\#(f(height + 14))">\#(label)</text>"#)
            tick += step
        }
        lines.append(#"<g class="axis top">"# + topLabels.joined() + "</g>")
        lines.append(#"<g class="axis bottom">"# + bottomLabels.joined() + "</g>")
        return lines
    }

    /// The class and outline of a wait's rectangle, drawn over its bar: the same in the chart
    /// and in the legend, so a swatch looks like the stretches it names.
    private func waitLook(_ kind: TimelineChart.Wait.Kind) -> String {
        let outline = kind.outline.map { #" stroke="\#(escape($0))" stroke-dasharray="3 2""# } ?? ""
        return #"class="wait \#(escape(kind.name.replacingSpaces))"\#(outline)"#
    }

    /// A swatch's overlay covers the swatch, or sits half a pixel in so that its outline shows whole.
    private func inset(_ kind: TimelineChart.Wait.Kind) -> String {
        kind.outline == nil ? #"width="12" height="12""# : #"x="0.5" y="0.5" width="11" height="11""#
    }

    /// The outcomes and kinds of wait that appear, in the order they first appear. A wait's
    /// swatch is drawn as the wait is: its pale rectangle over the colour of the first bar
    /// that has such a wait.
    private func legend(_ chart: TimelineChart) -> String {
        var outcomes: [TimelineChart.Outcome] = []
        var waits: [(kind: TimelineChart.Wait.Kind, colour: String)] = []
        for row in chart.rows {
            if !outcomes.contains(row.outcome) { outcomes.append(row.outcome) }
            for wait in row.waits where wait.end > wait.start && !waits.contains(where: { $0.kind == wait.kind }) {
                waits.append((wait.kind, row.outcome.colour))
            }
        }
        let keys =
            outcomes.map {
                #"<span class="key"><span class="swatch" style="background:\#(escape($0.colour))"></span>\#(escape($0.name))</span>"#
            }
            + waits.map {
                #"<span class="key"><svg xmlns="http://www.w3.org/2000/svg" class="swatch" width="12" height="12" viewBox="0 0 12 12"><rect width="12" height="12" fill="\#(escape($0.colour))"/><rect \#(waitLook($0.kind)) \#(inset($0.kind))/></svg>\#(escape($0.kind.label))</span>"#
            }
        return keys.joined(separator: " ")
    }

    private static let style = """
        body { font: 14px/1.4 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 24px; color: #1f2328; background: #fff; }
        h1 { font-size: 20px; margin: 0 0 4px; }
        .verdict { font-size: 15px; padding: 8px 12px; border-radius: 6px; margin: 8px 0 16px; }
        .verdict.pass { background: #e6f4ea; } .verdict.fail { background: #fdecea; }
        .gantt { display: block; width: 100%; height: auto; }
        .gantt text { font-size: 12px; fill: #1f2328; }
        .gantt .group-label { font-weight: 600; font-size: 13px; }
        .gantt .task.critical .task-label { font-weight: 600; }
        .gantt .band { fill: #f6f8fa; }
        .gantt .tick { stroke: #e1e4e8; stroke-width: 1; }
        .gantt .tick-label { fill: #6a737d; text-anchor: middle; font-size: 11px; }
        .gantt .task:hover .bar { stroke: #1f2328; stroke-width: 1.5; }
        .wait { fill: #fff; fill-opacity: 0.55; stroke-width: 1; }
        .gantt .marker line { stroke-width: 1.5; stroke-dasharray: 4 3; }
        .gantt .marker text { font-size: 11px; font-weight: 600; }
        .gantt .marker .span { fill-opacity: 0.12; }
        .legend { margin: 8px 0 16px; } .key { margin-right: 14px; white-space: nowrap; }
        .swatch { display: inline-block; width: 12px; height: 12px; border-radius: 2px; margin-right: 5px; vertical-align: -1px; box-sizing: border-box; }
        pre { background: #f6f8fa; padding: 12px; border-radius: 6px; font-size: 12px; overflow-x: auto; }
        """

    /// A round step, 1, 2 or 5 times a power of ten, giving at most ten ticks.
    static func tickStep(_ totalMilliseconds: Double) -> Double {
        // Whole microseconds, so that a step is exactly the decimal it prints as.
        var power = 1
        while true {
            for multiple in [1, 2, 5] where totalMilliseconds * 1000 / Double(multiple * power) <= 10 {
                return Double(multiple * power) / 1000
            }
            power *= 10
        }
    }

    private func f(_ value: Double) -> String {
        let rounded = (value * 10).rounded() / 10
        return rounded == rounded.rounded() ? "\(Int(rounded))" : "\(rounded)"
    }

    private func escape(_ text: String) -> String {
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

extension Duration {
    /// Milliseconds as a fraction, for positions on the page.
    fileprivate var milliseconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) * 1000 + Double(attoseconds) / 1e15
    }
}
