/// Draws a run's report as a text timeline for the terminal: one row per task, Gantt-style.
///
/// ```swift
/// print(TimelineRenderer(width: 40).render(try await launcher.report()))
/// ```
///
/// ```text
/// completed in 1.20 s · critical path: channel → config → home
///           0                                   1.20 s
/// channel * |████████                                | wait 0 µs   run 300 ms  global      succeeded
/// config  * |        ░░██████████████                | wait 50 ms  run 550 ms  global      succeeded
/// version   |████████████████████████████████████████| wait 0 µs   run 1.20 s  global      failed: offline
/// home    * |                        ██████████      | wait 0 µs   run 400 ms  main actor  succeeded
/// ◆ firstScreen at 800 ms
/// * critical path · ░ queued (dependencies done, waiting for a worker) · █ running · ◆ milestone
/// ```
///
/// After a launcher's ``Launcher/shutdown()``, its undos follow on a time axis of their own,
/// one row per task undone (▓, added to the legend).
///
/// A task's subtasks (``TaskRecord/parent``) follow it, their labels indented two spaces a level.
///
/// The last line is the legend, so a timeline pasted into an issue explains itself.
public struct TimelineRenderer: Sendable {
    /// The number of columns the run's whole duration spans; below 10 counts as 10, set here
    /// or in the initializer.
    public var width: Int {
        didSet { width = max(10, width) }
    }

    public init(width: Int = 50) {
        self.width = max(10, width)
    }

    /// A run's timeline.
    public func render(_ report: RunReport) -> String {
        render(report, shutdown: nil)
    }

    /// A launch's timeline, with its undos under it once it has been shut down.
    public func render(_ report: LaunchReport) -> String {
        render(report.run, shutdown: report.shutdown)
    }

    private func render(_ report: RunReport, shutdown: ShutdownReport?) -> String {
        let critical = Set(report.criticalPath)
        // A subtask's label is indented under its parent's, two spaces a level.
        let labels = zip(report.tasks, report.subtaskDepths).map { String(repeating: "  ", count: $1) + $0.id }
        let nameWidth = labels.map(\.count).max() ?? 0
        var lines: [String] = []
        var summary = "\(report.outcome) in \(report.duration.shortDescription)"
        if !report.criticalPath.isEmpty {
            summary += " · critical path: " + report.criticalPath.joined(separator: " → ")
        }
        lines.append(summary)
        let end = report.duration.shortDescription
        lines.append(
            pad("", nameWidth + 3) + "0" + String(repeating: " ", count: max(1, width + 1 - end.count)) + end)
        for (task, label) in zip(report.tasks, labels) {
            let bar = self.bar(for: task, duration: report.duration)
            let wait = task.waitTime.map { "wait \($0.shortDescription)" } ?? "wait -"
            let run = task.runTime.map { "run \($0.shortDescription)" } ?? "run -"
            let marker = critical.contains(task.id) ? "*" : " "
            lines.append(
                pad(label, nameWidth) + " \(marker) |\(bar)| " + field(wait) + field(run) + field(task.placement)
                    + "\(task.outcome)")
        }
        for milestone in report.milestones {
            lines.append("◆ \(milestone.name) at \(milestone.at.shortDescription)")
        }
        if let shutdown {
            lines += render(shutdown, nameWidth: nameWidth)
            lines.append(Self.legend + Self.shutdownLegend)
        } else {
            lines.append(Self.legend)
        }
        return lines.joined(separator: "\n")
    }

    /// A launcher's shutdown, under the launch: its own time axis, from the shutdown's start
    /// (counted from the launch's) to its end, one row per undo, in the order they ended.
    private func render(_ shutdown: ShutdownReport, nameWidth: Int) -> [String] {
        var lines = ["\(shutdown)"]
        guard !shutdown.undos.isEmpty else { return lines }
        let width = max(nameWidth, shutdown.undos.map(\.task.count).max() ?? 0)
        let start = shutdown.startedAt.shortDescription
        let end = shutdown.endedAt.shortDescription
        lines.append(
            pad("", width + 3) + start + String(repeating: " ", count: max(1, self.width + 2 - start.count - end.count))
                + end)
        for undo in shutdown.undos {
            var cells = [Character](repeating: " ", count: self.width)
            let from = min(self.width - 1, column(undo.startedAt - shutdown.startedAt, of: shutdown.duration))
            let to = max(from + 1, column(undo.endedAt - shutdown.startedAt, of: shutdown.duration))
            for index in from..<to { cells[index] = "▓" }
            lines.append(
                pad(undo.task, width) + "   |\(String(cells))| " + field("undo \(undo.duration.shortDescription)")
                    + "\(undo.outcome)")
        }
        return lines
    }

    private func bar(for task: TaskRecord, duration: Duration) -> String {
        var cells = [Character](repeating: " ", count: width)
        guard let startedAt = task.startedAt else { return String(cells) }
        let start = min(width - 1, column(startedAt, of: duration))
        let end = max(start + 1, column(task.endedAt, of: duration))
        if let queuedAt = task.queuedAt {
            for index in min(start, column(queuedAt, of: duration))..<start { cells[index] = "░" }
        }
        for index in start..<end { cells[index] = "█" }
        return String(cells)
    }

    /// The column boundary nearest before `time`: 0 at the start, `width` at the end.
    private func column(_ time: Duration, of duration: Duration) -> Int {
        guard duration > .zero else { return 0 }
        let fraction = time / duration
        return min(width, max(0, Int(fraction * Double(width))))
    }

    /// What each symbol of the timeline means; the last line of every rendering.
    static let legend = "* critical path · ░ queued (dependencies done, waiting for a worker) · █ running · ◆ milestone"
    /// The legend's addition when a launcher's shutdown is drawn.
    static let shutdownLegend = " · ▓ undoing (shutdown)"

    /// `text` padded to `length` columns, never cut; padding only, so every row's bar starts
    /// in the same column whichever id is the longest.
    private func pad(_ text: String, _ length: Int) -> String {
        text + String(repeating: " ", count: max(0, length - text.count))
    }

    /// A 12-column field of the row's tail, with at least one space after a longer text so
    /// fields never run together.
    private func field(_ text: String) -> String {
        pad(text, 11) + " "
    }
}
