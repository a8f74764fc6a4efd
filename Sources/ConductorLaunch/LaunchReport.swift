/// A launch's report: its run's ``RunReport`` and, once ``Launcher/shutdown()`` has returned,
/// the shutdown's ``ShutdownReport``.
///
/// Every property of the run's report reads through, so a launch's report is read like a
/// run's:
///
/// ```swift
/// let report = try await launcher.report()
/// print(report.outcome, report.criticalPath)  // the run's
/// if let config = report["config"] { print(config.outcome) }
/// print(report.shutdown?.isSuccess ?? true)  // the launch's own
/// ```
///
/// It saves to the same file as a run's report (`"shutdown"` is one more field there), so a
/// launch saved before this type existed reads back as one.
@dynamicMemberLookup
public struct LaunchReport: Sendable {
    /// The launch's run: its tasks, milestones, outcome and critical path.
    public var run: RunReport
    /// The launcher's undos, once its ``Launcher/shutdown()`` has returned; `nil` before.
    public var shutdown: ShutdownReport?

    public init(run: RunReport, shutdown: ShutdownReport? = nil) {
        self.run = run
        self.shutdown = shutdown
    }

    /// A property of the run's report: `report.outcome`, `report.tasks`, `report.identity`.
    public subscript<Value>(dynamicMember property: KeyPath<RunReport, Value>) -> Value {
        run[keyPath: property]
    }

    /// The task with this id, or `nil` if the launch has none.
    public subscript(id: String) -> TaskRecord? { run[id] }
}

extension LaunchReport: CustomStringConvertible {
    /// The run's one line, as ``RunReport/description`` prints it.
    public var description: String { run.description }
}
