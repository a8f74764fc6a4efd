/// What ``HTMLTimelineRenderer`` draws: rows of bars in groups, with waits drawn over the bars
/// and vertical markers. Made from a ``RunReport`` with ``init(_:title:)-(RunReport,_)`` (a ``LaunchReport`` with ``init(_:title:)-(LaunchReport,_)``), or built by hand
/// to put several runs, or work that is not a task, on one page.
///
/// ```swift
/// import Foundation
///
/// var chart = TimelineChart(try await launcher.report(), title: "MyApp launch")
/// chart.markers.append(.init(kind: .milestone, name: "first frame", at: .milliseconds(640)))
/// try HTMLTimelineRenderer().render(chart).write(to: URL(filePath: "launch.html"), atomically: true, encoding: .utf8)
/// ```
public struct TimelineChart: Sendable {
    /// The page's heading.
    public var title: String
    /// A one-line judgement shown under the title, green or red.
    public var verdict: Verdict?
    /// The bars, drawn in groups in the order each group's first row appears.
    public var rows: [Row]
    /// Vertical lines across every row, with an optional shaded span.
    public var markers: [Marker]
    /// Preformatted text under the chart, such as ``TimelineRenderer``'s rendering.
    public var notes: String?

    public init(
        title: String, rows: [Row], markers: [Marker] = [], verdict: Verdict? = nil, notes: String? = nil
    ) {
        self.title = title
        self.rows = rows
        self.markers = markers
        self.verdict = verdict
        self.notes = notes
    }

    /// The report's tasks as rows grouped by stage, in the order they were added; the time a
    /// task waited for a worker drawn as a ``Wait/Kind-swift.struct/queued`` wait; milestones
    /// as markers; the text timeline as notes. A task that never started is a thin bar where
    /// it ended.
    public init(_ report: RunReport, title: String = "Conductor run") {
        let critical = Set(report.criticalPath)
        let rows = zip(report.tasks, report.subtaskDepths).map { task, depth in
            let start = task.startedAt ?? task.queuedAt ?? task.endedAt
            let waitStart = task.queuedAt ?? start
            var details = [
                "\(task.outcome)", "\(task.attempts) attempt\(task.attempts == 1 ? "" : "s")", task.placement,
            ]
            if critical.contains(task.id) { details.append("on the critical path") }
            if let parent = task.parent { details.append("subtask of \(parent)") }
            return Row(
                group: task.stage ?? "tasks", name: task.id, start: waitStart, end: task.endedAt,
                outcome: Outcome(task.outcome), detail: details.joined(separator: " · "),
                waits: task.startedAt.map { started in
                    started > waitStart ? [Wait(kind: .queued, start: waitStart, end: started)] : []
                } ?? [],
                isCritical: critical.contains(task.id), depth: depth)
        }
        self.init(
            title: title, rows: rows,
            markers: report.milestones.map { Marker(kind: .milestone, name: $0.name, at: $0.at) },
            verdict: Verdict(passed: report.isSuccess, text: "\(report)"),
            notes: TimelineRenderer(width: 60).render(report))
    }

    /// A launch's chart: its run's, with the text timeline's undo rows in the notes once the
    /// launch has been shut down.
    public init(_ report: LaunchReport, title: String = "Conductor run") {
        self.init(report.run, title: title)
        notes = TimelineRenderer(width: 60).render(report)
    }

    /// When the last bar or marker ends.
    var end: Duration {
        max(rows.map(\.end).max() ?? .zero, markers.map { $0.end ?? $0.at }.max() ?? .zero)
    }

    /// The groups in the order of their first row.
    var groups: [String] {
        var seen: Set<String> = []
        return rows.map(\.group).filter { seen.insert($0).inserted }
    }
}

extension TimelineChart {
    /// A one-line judgement of the run.
    public struct Verdict: Sendable, Hashable {
        public var passed: Bool
        public var text: String

        public init(passed: Bool, text: String) {
            self.passed = passed
            self.text = text
        }
    }

    /// One bar: from `start` to `end`, coloured by its outcome.
    public struct Row: Sendable, Hashable {
        /// The group it is drawn in: a stage, `launch`, `network`.
        public var group: String
        public var name: String
        public var start: Duration
        public var end: Duration
        public var outcome: Outcome
        /// More about it, shown when the pointer rests on the bar.
        public var detail: String
        /// Stretches of the bar spent waiting rather than working.
        public var waits: [Wait]
        /// Whether it is on the run's critical path: its label is bold.
        public var isCritical: Bool
        /// How far its label is indented: a subtask's is one level deeper than its parent's.
        public var depth: Int

        public init(
            group: String, name: String, start: Duration, end: Duration, outcome: Outcome, detail: String = "",
            waits: [Wait] = [], isCritical: Bool = false, depth: Int = 0
        ) {
            self.group = group
            self.name = name
            self.start = start
            self.end = end
            self.outcome = outcome
            self.detail = detail
            self.waits = waits
            self.isCritical = isCritical
            self.depth = depth
        }
    }

    /// How a bar ended: its name in the legend and its colour.
    public struct Outcome: Sendable, Hashable {
        public var name: String
        /// A CSS colour.
        public var colour: String

        public init(name: String, colour: String) {
            self.name = name
            self.colour = colour
        }

        public static let succeeded = Outcome(name: "succeeded", colour: "#2f9e5b")
        public static let failed = Outcome(name: "failed", colour: "#d64541")
        public static let timedOut = Outcome(name: "timed out", colour: "#e8912d")
        public static let skipped = Outcome(name: "skipped", colour: "#9aa0a6")
        public static let cancelled = Outcome(name: "cancelled", colour: "#b8bcc2")

        /// The colour of a task's outcome.
        public init(_ outcome: TaskOutcome) {
            switch outcome {
            case .succeeded: self = .succeeded
            case .failed: self = .failed
            case .timedOut: self = .timedOut
            case .skipped: self = .skipped
            case .cancelled: self = .cancelled
            }
        }
    }

    /// A stretch of a bar spent waiting, drawn pale over it.
    public struct Wait: Sendable, Hashable {
        public var kind: Kind
        public var start: Duration
        public var end: Duration

        public init(kind: Kind, start: Duration, end: Duration) {
            self.kind = kind
            self.start = start
            self.end = end
        }

        /// What the wait was for: a CSS class name, a label for the legend, and a colour for a
        /// dashed outline (none for a plain pale stretch).
        public struct Kind: Sendable, Hashable {
            public var name: String
            public var label: String
            public var outline: String?

            public init(name: String, label: String, outline: String? = nil) {
                self.name = name
                self.label = label
                self.outline = outline
            }

            /// Dependencies done, waiting for a worker.
            public static let queued = Kind(name: "queued", label: "queued (waiting for a worker)")
        }
    }

    /// A moment worth a vertical line across every row: a milestone, a refresh.
    public struct Marker: Sendable, Hashable {
        public var kind: Kind
        public var name: String
        public var at: Duration
        /// For a marker that lasts: when it ended; the span is shaded.
        public var end: Duration?

        public init(kind: Kind, name: String, at: Duration, end: Duration? = nil) {
            self.kind = kind
            self.name = name
            self.at = at
            self.end = end
        }

        /// "milestone firstScreen", or just "ready" where the name would repeat the kind.
        public var label: String {
            name == kind.name ? name : "\(kind.name) \(name)"
        }

        /// A kind of marker: its name (also its CSS class) and colour.
        public struct Kind: Sendable, Hashable {
            public var name: String
            /// A CSS colour.
            public var colour: String

            public init(name: String, colour: String) {
                self.name = name
                self.colour = colour
            }

            public static let milestone = Kind(name: "milestone", colour: "#6f42c1")
        }
    }
}
