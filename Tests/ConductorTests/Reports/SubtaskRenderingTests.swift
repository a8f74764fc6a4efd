import Foundation
import Testing

@testable import ConductorGraph
@testable import ConductorReports

/// A report's subtasks (``TaskRecord/parent``) drawn under their parent: indented in the text
/// and HTML timelines, named in the Chrome trace's `args`.
@Suite struct SubtaskRenderingTests {
    private func report() -> RunReport {
        func record(_ id: String, parent: String?, start: Duration, end: Duration) -> TaskRecord {
            TaskRecord(
                id: id, stage: nil, dependencies: [], outcome: .succeeded, queuedAt: start, startedAt: start,
                endedAt: end, attempts: 1, placement: "global", parent: parent)
        }
        return RunReport(
            outcome: .completed,
            tasks: [
                record("fib", parent: nil, start: .zero, end: .milliseconds(90)),
                record("fib/left", parent: "fib", start: .milliseconds(10), end: .milliseconds(70)),
                record("fib/left/left", parent: "fib/left", start: .milliseconds(20), end: .milliseconds(60)),
                record("fib/right", parent: "fib", start: .milliseconds(10), end: .milliseconds(40)),
                record("other", parent: nil, start: .zero, end: .milliseconds(10)),
            ],
            milestones: [], duration: .milliseconds(90), criticalPath: ["fib"])
    }

    @Test func depthsFollowTheParents() {
        #expect(report().subtaskDepths == [0, 1, 2, 1, 0])
    }

    @Test func theTextTimelineIndentsSubtasks() {
        let lines = TimelineRenderer(width: 10).render(report()).split(separator: "\n").map(String.init)
        let labels = lines.dropFirst(2).prefix(5).map { $0.prefix { $0 != "|" } }
        #expect(labels.map { $0.hasPrefix("fib ") } == [true, false, false, false, false])
        #expect(labels[1].hasPrefix("  fib/left "))
        #expect(labels[2].hasPrefix("    fib/left/left "))
        #expect(labels[3].hasPrefix("  fib/right "))
        #expect(labels[4].hasPrefix("other "))
        // The bars still line up.
        let bars = lines.dropFirst(2).prefix(5).map { line in line.firstIndex(of: "|").map { $0.utf16Offset(in: line) }
        }
        #expect(Set(bars).count == 1)
    }

    @Test func theHTMLTimelineNestsSubtaskRows() {
        let chart = TimelineChart(report())
        #expect(chart.rows.map(\.depth) == [0, 1, 2, 1, 0])
        let page = HTMLTimelineRenderer().render(chart)
        #expect(page.contains(#"<text class="task-label" x="20" y="#))
        #expect(page.contains(#"<text class="task-label" x="32" y="#))
        #expect(page.contains(#"<text class="task-label" x="44" y="#))
    }

    @Test func theChromeTraceNamesEachSubtasksParent() throws {
        let json = ChromeTrace(report()).json
        #expect(json.contains(#""parent":"fib""#))
        #expect(json.contains(#""parent":"fib\/left""#) || json.contains(#""parent":"fib/left""#))
    }
}
