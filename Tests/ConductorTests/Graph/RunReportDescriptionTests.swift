import Testing

@testable import ConductorAssembly
@testable import ConductorCore
@testable import ConductorGate
@testable import ConductorGraph
@testable import ConductorHarmonizer
@testable import ConductorLaunch
@testable import ConductorReports

@Suite struct RunReportDescriptionTests {
    struct Offline: Error, CustomStringConvertible {
        var description: String { "offline" }
    }

    private func record(_ id: String, _ outcome: TaskOutcome, endedAt: Duration = .seconds(1)) -> TaskRecord {
        TaskRecord(
            id: id, stage: nil, dependencies: [], outcome: outcome, queuedAt: .zero, startedAt: .zero,
            endedAt: endedAt, attempts: 1, placement: "global")
    }

    /// `print(report)` used to show the type's fields, with an internal type's name among them.
    @Test func printingAReportGivesItsOutcomeCountsDurationAndCriticalPath() {
        let report = RunReport(
            outcome: .completed,
            tasks: [
                record("channel", .succeeded), record("config", .succeeded, endedAt: .milliseconds(1200)),
                record("version", .failed(Offline())), record("comments", .skipped(dependency: "version")),
                record("ads", .skipped(dependency: "version")),
            ],
            milestones: [], duration: .milliseconds(1200), criticalPath: ["channel", "config"])
        #expect(
            String(describing: report)
                == "completed in 1.20 s · 2 succeeded, 1 failed, 2 skipped · critical path: channel → config")
    }

    @Test func aReportWithNoTasksSaysSoAndOmitsTheCriticalPath() {
        let report = RunReport(outcome: .cancelled, tasks: [], milestones: [], duration: .zero, criticalPath: [])
        #expect(String(describing: report) == "cancelled in 0 µs · no tasks")
    }

    @Test func timedOutAndCancelledTasksAreCountedUnderTheirOwnNames() {
        let report = RunReport(
            outcome: .completed,
            tasks: [record("a", .timedOut(after: .seconds(1))), record("b", .cancelled)],
            milestones: [], duration: .seconds(1), criticalPath: ["a"])
        #expect(String(describing: report) == "completed in 1.00 s · 1 timed out, 1 cancelled · critical path: a")
    }
}
