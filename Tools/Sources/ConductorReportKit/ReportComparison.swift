public import ConductorReports

/// Two sets of saved reports compared: the critical path, named milestones and each task's
/// run time, as medians over each set, so one slow run neither fails nor passes a check alone.
///
/// ```swift
/// let comparison = ReportComparison(base: baseReports, new: newReports, thresholds: thresholds)
/// print(comparison.text)
/// exit(comparison.regressions.isEmpty ? 0 : 1)
/// ```
public struct ReportComparison: Sendable {
    /// What a change measures.
    public enum Subject: Sendable, Hashable, CustomStringConvertible {
        /// The end of the critical path: when the task that ended last ended.
        case criticalPath
        /// When a milestone was reached.
        case milestone(String)
        /// A task's run time: from its body's start to its end.
        case task(String)

        public var description: String {
            switch self {
            case .criticalPath: "critical path"
            case .milestone(let name): "milestone \(name)"
            case .task(let id): id
            }
        }
    }

    /// One measure, base against new; `nil` on the side where no report has it.
    public struct Change: Sendable, Hashable {
        public let subject: Subject
        public let base: Duration?
        public let new: Duration?
        /// For a task the base reports have but never ran: how it ended there, `"skipped"` or
        /// `"cancelled"`; `nil` when it ran, or no base report has it.
        public internal(set) var baseEnding: String? = nil
        /// The same for the new reports: a task cancelled in the new run is not gone.
        public internal(set) var newEnding: String? = nil

        /// New minus base, when both sides have it.
        public var delta: Duration? {
            guard let base, let new else { return nil }
            return new - base
        }

        /// The growth as a fraction of the base: 0.1 for 10 % slower; infinite from a zero base.
        public var relative: Double? {
            guard let base, let delta else { return nil }
            guard base > .zero else { return delta > .zero ? .infinity : 0 }
            return delta / base
        }
    }

    /// Why the check fails.
    public struct Regression: Sendable, Hashable, CustomStringConvertible {
        public let subject: Subject
        public let description: String
    }

    public let thresholds: Thresholds
    public let baseCount: Int
    public let newCount: Int
    /// The critical path, base against new.
    public let criticalPath: Change
    /// The critical path's tasks in the last report of each set.
    public let criticalPathTasks: (base: [String], new: [String])
    /// Each named milestone, in the order named.
    public let milestones: [Change]
    /// Every task's run time, biggest change first; tasks that ran on one side only last.
    public let tasks: [Change]
    /// What fails the check; empty when it passes.
    public let regressions: [Regression]

    /// Compares the medians of `base` and `new`.
    ///
    /// - Throws: ``ReportToolError/Code/badArgument`` when a set is empty or a named
    ///   milestone is in none of the base reports, which no comparison can judge;
    ///   ``ReportToolError/Code/differentRuns`` when the reports are not of the same launch
    ///   (see ``checkSameLaunch(base:new:)``).
    public init(base: [RunReport], new: [RunReport], thresholds: Thresholds) throws(ReportToolError) {
        guard !base.isEmpty, !new.isEmpty else {
            throw .badArgument("diff needs at least one base report and one new report")
        }
        try Self.checkSameLaunch(base: base, new: new)
        self.thresholds = thresholds
        baseCount = base.count
        newCount = new.count
        criticalPath = Change(
            subject: .criticalPath, base: Self.median(base.map(Self.criticalPathEnd)),
            new: Self.median(new.map(Self.criticalPathEnd)))
        criticalPathTasks = (base.last!.criticalPath, new.last!.criticalPath)
        var milestones: [Change] = []
        for name in thresholds.milestones {
            func at(_ report: RunReport) -> Duration? { report.milestones.first { $0.name == name }?.at }
            let change = Change(
                subject: .milestone(name), base: Self.median(base.compactMap(at)), new: Self.median(new.compactMap(at)))
            guard change.base != nil else {
                throw .badArgument("milestone '\(name)' is in none of the base reports")
            }
            milestones.append(change)
        }
        self.milestones = milestones
        var ids: [String] = []
        var seen: Set<String> = []
        for report in base + new {
            for task in report.tasks where seen.insert(task.id).inserted { ids.append(task.id) }
        }
        func runTimes(_ reports: [RunReport], _ id: String) -> [Duration] {
            reports.compactMap { $0[id]?.runTime }
        }
        let changes = ids.map { id in
            var change = Change(
                subject: .task(id), base: Self.median(runTimes(base, id)), new: Self.median(runTimes(new, id)))
            if change.base == nil { change.baseEnding = Self.ending(of: id, in: base) }
            if change.new == nil { change.newEnding = Self.ending(of: id, in: new) }
            return change
        }
        tasks = changes.sorted { a, b in
            switch (a.delta, b.delta) {
            case (let x?, let y?):
                x.magnitude != y.magnitude ? x.magnitude > y.magnitude : "\(a.subject)" < "\(b.subject)"
            case (.some, nil): true
            case (nil, .some): false
            case (nil, nil): "\(a.subject)" < "\(b.subject)"
            }
        }
        var regressions: [Regression] = []
        for change in [criticalPath] + milestones {
            if let regression = Self.regression(change, thresholds) { regressions.append(regression) }
        }
        let baseCompleted = base.filter(\.isSuccess).count * 2 > base.count
        let newCompleted = new.filter(\.isSuccess).count * 2 > new.count
        if baseCompleted && !newCompleted {
            regressions.append(
                Regression(subject: .criticalPath, description: "the new runs did not complete: \(new.last!.outcome)"))
        }
        self.regressions = regressions
    }

    /// Refuses to compare reports that are not runs of the same launch: two reports that name
    /// different launchers (a run of a ``TaskGraph`` has no name, and is not compared by
    /// name), or a base and a new side that both have tasks but none in common. Reports saved
    /// before format 1.1 have no name, so only their tasks are compared.
    ///
    /// - Throws: ``ReportToolError/Code/differentRuns``, naming the launchers or the tasks.
    public static func checkSameLaunch(base: [RunReport], new: [RunReport]) throws(ReportToolError) {
        var names: [(name: String, side: String)] = []
        for (side, reports) in [("base", base), ("new", new)] {
            for name in reports.compactMap({ $0.identity?.name }) where !names.contains(where: { $0.name == name }) {
                names.append((name, side))
            }
        }
        if names.count > 1 {
            let list = names.map { "'\($0.name)' (\($0.side))" }.joined(separator: ", ")
            throw .differentRuns("the reports are of different launchers, \(list): compare runs of one launcher")
        }
        func ids(_ reports: [RunReport]) -> [String] {
            var ids: [String] = []
            for report in reports { for task in report.tasks where !ids.contains(task.id) { ids.append(task.id) } }
            return ids
        }
        let (baseIDs, newIDs) = (ids(base), ids(new))
        if !baseIDs.isEmpty, !newIDs.isEmpty, Set(baseIDs).isDisjoint(with: newIDs) {
            func some(_ ids: [String]) -> String {
                ids.prefix(3).joined(separator: ", ") + (ids.count > 3 ? ", …" : "")
            }
            throw .differentRuns(
                "the base and new reports share no task, so they are not runs of the same launch "
                    + "(base: \(some(baseIDs)); new: \(some(newIDs)))")
        }
    }

    /// How a task that has no run time in `reports` ended in the last of them that has it.
    private static func ending(of id: String, in reports: [RunReport]) -> String? {
        guard let outcome = reports.last(where: { $0[id] != nil })?[id]?.outcome else { return nil }
        switch outcome {
        case .skipped: return "skipped"
        case .cancelled: return "cancelled"
        default: return "not run"
        }
    }

    /// The tasks whose run time changed by at least the noise floor, or ran on one side only.
    public var tasksOverNoise: [Change] {
        tasks.filter { change in change.delta.map { $0.magnitude >= thresholds.minChange } ?? true }
    }

    private static func regression(_ change: Change, _ thresholds: Thresholds) -> Regression? {
        guard let failOver = thresholds.failOver else { return nil }
        guard let base = change.base else { return nil }
        guard let new = change.new else {
            return Regression(subject: change.subject, description: "\(change.subject) was not reached")
        }
        let delta = new - base
        guard delta > .zero, delta >= thresholds.minChange, let relative = change.relative, relative > failOver else {
            return nil
        }
        return Regression(
            subject: change.subject,
            description:
                "\(change.subject) grew \(TimeText.signed(delta)) (\(TimeText.percent(relative))), over \(TimeText.percent(failOver))"
        )
    }

    /// When the critical path's last task ended; the run's duration when there is no path.
    static func criticalPathEnd(_ report: RunReport) -> Duration {
        report.criticalPath.last.flatMap { report[$0]?.endedAt } ?? report.duration
    }

    /// The middle value; the mean of the two middle values of an even count.
    static func median(_ values: [Duration]) -> Duration? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}

extension Duration {
    var magnitude: Duration { self < .zero ? .zero - self : self }
}
