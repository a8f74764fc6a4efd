extension ReportComparison {
    /// The comparison as `conductor-report diff` prints it:
    ///
    /// ```text
    /// base: 3 reports · new: 3 reports · medians · fail over +10% · noise floor 5 ms
    /// critical path            1.00 s → 1.12 s      +120 ms     +12%
    ///   was: config → feed → home
    ///   now: config → feed → ads → home
    /// milestone firstScreen    900 ms → 1.02 s      +120 ms   +13.3%
    /// tasks by impact (run time):
    ///   feed                   500 ms → 620 ms      +120 ms     +24%
    ///   banner                      - → 40 ms           new
    ///   (3 tasks changed by less than 5 ms)
    /// ✘ critical path grew +120 ms (+12%), over +10%
    /// ```
    public var text: String {
        var lines: [String] = []
        var heading = [
            "base: \(Self.count(baseCount))", "new: \(Self.count(newCount))",
            baseCount > 1 || newCount > 1 ? "medians" : "",
            thresholds.failOver.map { "fail over \(TimeText.percent($0))" } ?? "no threshold",
            "noise floor \(TimeText.duration(thresholds.minChange))",
        ]
        heading.removeAll(where: \.isEmpty)
        lines.append(heading.joined(separator: " · "))
        let width = max(20, ([criticalPath] + milestones + tasks).map { "\($0.subject)".count }.max() ?? 0)
        lines.append(Self.row(criticalPath, width: width, indent: ""))
        if criticalPathTasks.base != criticalPathTasks.new {
            lines.append("  was: " + criticalPathTasks.base.joined(separator: " → "))
            lines.append("  now: " + criticalPathTasks.new.joined(separator: " → "))
        }
        for milestone in milestones { lines.append(Self.row(milestone, width: width, indent: "")) }
        let listed = tasksOverNoise
        lines.append("tasks by impact (run time):")
        for task in listed { lines.append(Self.row(task, width: width - 2, indent: "  ")) }
        let quiet = tasks.count - listed.count
        if quiet > 0 {
            lines.append(
                "  (\(quiet) task\(quiet == 1 ? "" : "s") changed by less than \(TimeText.duration(thresholds.minChange)))"
            )
        }
        if regressions.isEmpty {
            lines.append(
                thresholds.failOver.map {
                    "✔ no regression over \(TimeText.percent($0)) and \(TimeText.duration(thresholds.minChange))"
                } ?? "✔ no threshold set: changes reported only")
        } else {
            for regression in regressions { lines.append("✘ \(regression)") }
        }
        return lines.joined(separator: "\n")
    }

    private static func count(_ count: Int) -> String {
        count == 1 ? "1 report" : "\(count) reports"
    }

    private static func row(_ change: Change, width: Int, indent: String) -> String {
        let name = "\(change.subject)"
        let base = change.base.map(TimeText.duration) ?? "-"
        let new = change.new.map(TimeText.duration) ?? "-"
        var text = indent + pad(name, width) + " " + leftPad(base, 9) + " → " + pad(new, 9)
        if let delta = change.delta, let relative = change.relative {
            text += " " + leftPad(TimeText.signed(delta), 9) + "  " + leftPad(TimeText.percent(relative), 7)
        } else {
            text += " " + leftPad(Self.missing(change), 9)
        }
        return text
    }

    /// Why a task has no change: how it ended on the side where it did not run ("cancelled",
    /// "was skipped"), or "new" or "gone" when that side's reports lack it.
    private static func missing(_ change: Change) -> String {
        guard change.new == nil else { return change.baseEnding.map { "was \($0)" } ?? "new" }
        guard let ending = change.newEnding else { return "gone" }
        let isNew = change.base == nil && change.baseEnding == nil
        return isNew ? "new, \(ending)" : ending
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - text.count))
    }

    private static func leftPad(_ text: String, _ width: Int) -> String {
        String(repeating: " ", count: max(0, width - text.count)) + text
    }
}
