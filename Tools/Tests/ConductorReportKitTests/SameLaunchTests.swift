import ConductorReportKit
import ConductorReports
import Foundation
import Testing

/// `diff` compares runs of one launch: reports of different launchers, or that share no task,
/// are an unusable input (2), not a pass.
@Suite struct SameLaunchTests {
    private func diff(_ base: String, _ new: String) -> (output: String, status: Int32) {
        DiffCommand(
            base: [DiffTests.fixture(base)], new: [DiffTests.fixture(new)], thresholds: Thresholds(failOver: 0.1)
        ).run()
    }

    @Test func reportsThatShareNoTaskAreRefused() {
        let result = diff("base-1.json", "other-run.json")
        #expect(result.status == 2)
        #expect(
            result.output
                == "error: the base and new reports share no task, so they are not runs of the same launch "
                + "(base: config, feed, home, …; new: page.config, page.feed, page.home, …)")
    }

    @Test func reportsOfDifferentLaunchersAreRefused() {
        let result = diff("named-launch.json", "named-warmup.json")
        #expect(result.status == 2)
        #expect(
            result.output
                == "error: the reports are of different launchers, 'launch' (base), 'warmup' (new): "
                + "compare runs of one launcher")
    }

    /// Several runs a side: one report of another launcher among them is enough to refuse.
    @Test func oneReportOfAnotherLauncherAmongSeveralIsRefused() {
        let result = DiffCommand(
            base: [DiffTests.fixture("named-launch.json"), DiffTests.fixture("base-2.json")],
            new: [DiffTests.fixture("named-launch.json"), DiffTests.fixture("named-warmup.json")],
            thresholds: Thresholds()
        ).run()
        #expect(result.status == 2)
    }

    /// A report saved before format 1.1 has no name: it is compared with a named one by its
    /// tasks, and passes.
    @Test func aReportWithoutANameIsComparedByItsTasks() throws {
        #expect(diff("base-1.json", "named-launch.json").status == 0)
        #expect(diff("named-warmup.json", "base-2.json").status == 0)
        let named = try ReportFiles.load(DiffTests.fixture("named-launch.json"))
        #expect(named.identity?.name == "launch")
        #expect(try ReportFiles.load(DiffTests.fixture("base-1.json")).identity == nil)
    }

    /// A new run that never started a task is not "another launch": it did not complete.
    @Test func aSideWithNoTasksIsARunThatDidNotComplete() throws {
        let empty = try JSONDecoder().decode(
            RunReport.self,
            from: Data(
                #"""
                {"format": "conductor.run-report", "version": "1.1", "outcome": {"kind": "cancelled"},
                 "durationNs": 0, "criticalPath": [], "milestones": [], "tasks": []}
                """#.utf8))
        let base = try ReportFiles.load(DiffTests.fixture("base-1.json"))
        let comparison = try ReportComparison(base: [base], new: [empty], thresholds: Thresholds())
        #expect(comparison.regressions.map(\.description) == ["the new runs did not complete: cancelled"])
    }
}
