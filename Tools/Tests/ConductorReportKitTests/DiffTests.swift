import ConductorReportKit
import ConductorReports
import Foundation
import Testing

/// `diff` on the committed fixtures: a launch whose critical path is config → feed → home,
/// ending near 1 s in the base runs.
@Suite struct DiffTests {
    static func fixture(_ name: String) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
            .appendingPathComponent(name).path
    }

    static func fixtures(_ prefix: String) -> [String] {
        (1...3).map { fixture("\(prefix)-\($0).json") }
    }

    private func diff(
        _ base: [String], _ new: [String], failOver: Double? = 0.10, minChange: Duration = .milliseconds(5),
        milestones: [String] = []
    ) -> (output: String, status: Int32) {
        DiffCommand(
            base: base, new: new,
            thresholds: Thresholds(failOver: failOver, minChange: minChange, milestones: milestones)
        ).run()
    }

    // MARK: - Thresholds and exit codes

    @Test func theSameReportPasses() {
        let result = diff([Self.fixture("base-1.json")], [Self.fixture("base-1.json")])
        #expect(result.status == 0)
        #expect(result.output.hasSuffix("✔ no regression over +10% and 5 ms"))
    }

    @Test func aCriticalPathGrownOverTheThresholdFails() {
        let result = diff([Self.fixture("base-1.json")], [Self.fixture("slower-1.json")])
        #expect(result.status == 1)
        #expect(result.output.hasSuffix("✘ critical path grew +120 ms (+12%), over +10%"))
    }

    @Test func aGrowthUnderTheThresholdPasses() {
        let result = diff([Self.fixture("base-1.json")], [Self.fixture("slower-1.json")], failOver: 0.15)
        #expect(result.status == 0)
    }

    @Test func withoutAThresholdChangesAreReportedOnly() {
        let result = diff([Self.fixture("base-1.json")], [Self.fixture("slower-1.json")], failOver: nil)
        #expect(result.status == 0)
        #expect(result.output.contains("feed"))
        #expect(result.output.hasSuffix("✔ no threshold set: changes reported only"))
    }

    @Test func aNamedMilestoneIsCheckedToo() {
        // The critical path passes at 15 %; firstScreen grew 120 ms of 900 (13.3 %) and fails at 12 %.
        let passing = diff(
            [Self.fixture("base-1.json")], [Self.fixture("slower-1.json")], failOver: 0.125,
            milestones: ["firstScreen"])
        #expect(passing.status == 1)
        #expect(passing.output.hasSuffix("✘ milestone firstScreen grew +120 ms (+13.3%), over +12.5%"))
        let withoutMilestone = diff([Self.fixture("base-1.json")], [Self.fixture("slower-1.json")], failOver: 0.125)
        #expect(withoutMilestone.status == 0)
    }

    @Test func aMilestoneNoBaseHasCannotBeChecked() {
        let result = diff([Self.fixture("base-1.json")], [Self.fixture("base-1.json")], milestones: ["fullPage"])
        #expect(result.status == 2)
        #expect(result.output == "error: milestone 'fullPage' is in none of the base reports")
    }

    @Test func aNewRunThatFailedIsARegression() {
        let result = diff([Self.fixture("base-1.json")], [Self.fixture("failed.json")])
        #expect(result.status == 1)
        #expect(
            result.output.contains("✘ the new runs did not complete: failed (required task 'home' failed: offline)"))
    }

    /// A new run that did not complete fails the check with no threshold as well: there is no
    /// launch time to compare.
    @Test func aNewRunThatDidNotCompleteFailsWithoutAThreshold() {
        let result = diff([Self.fixture("base-1.json")], [Self.fixture("cancelled.json")], failOver: nil)
        #expect(result.status == 1)
        #expect(result.output.hasSuffix("✘ the new runs did not complete: cancelled"))
    }

    /// A task the new run cancelled before it began is listed as cancelled, not as gone.
    @Test func aCancelledTaskIsListedAsCancelled() {
        let result = diff([Self.fixture("base-1.json")], [Self.fixture("cancelled.json")], failOver: nil)
        let lines = result.output.split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("  feed ") && $0.contains(" 500 ms → - ") && $0.hasSuffix(" cancelled") })
        #expect(lines.contains { $0.hasPrefix("  home ") && $0.hasSuffix("cancelled") })
        #expect(!result.output.contains("gone"))
        // The other way round: it ran in the new run only.
        let back = diff([Self.fixture("cancelled.json")], [Self.fixture("base-1.json")], failOver: nil)
        #expect(
            back.output.split(separator: "\n").contains { $0.hasPrefix("  feed ") && $0.hasSuffix("was cancelled") })
    }

    @Test func anUnreadableReportIsNotARegression() {
        let missing = diff([Self.fixture("base-1.json")], [Self.fixture("no-such.json")])
        #expect(missing.status == 2)
        #expect(missing.output.hasPrefix("error: cannot read the report "))
        #expect(missing.output.hasSuffix("no-such.json: no such file, or it cannot be opened"))
        let notAReport = diff([Self.fixture("base-1.json")], [#filePath])
        #expect(notAReport.status == 2)
        #expect(notAReport.output.hasSuffix("DiffTests.swift: not valid JSON"))
    }

    /// A report from a newer major version of the format: named, and not a regression.
    @Test func aReportOfANewerFormatIsRefusedByName() {
        let result = diff([Self.fixture("base-1.json")], [Self.fixture("future-2.0.json")])
        #expect(result.status == 2)
        #expect(
            result.output.hasSuffix(
                "future-2.0.json: the report is format version 2.0; this Conductor reads 1.x: update it to read the report"
            ))
    }

    // MARK: - Noise floor

    /// A 20 ms launch that took 24 ms grew 20 %, but by 4 ms: under a 5 ms floor it passes.
    @Test func aChangeUnderTheNoiseFloorNeverFails() {
        let tiny = ([Self.fixture("tiny-base.json")], [Self.fixture("tiny-new.json")])
        #expect(diff(tiny.0, tiny.1, minChange: .milliseconds(5)).status == 0)
        let strict = diff(tiny.0, tiny.1, minChange: .milliseconds(1))
        #expect(strict.status == 1)
        #expect(strict.output.hasSuffix("✘ critical path grew +4 ms (+20%), over +10%"))
    }

    @Test func tasksUnderTheNoiseFloorAreCountedNotListed() throws {
        let result = diff([Self.fixture("base-1.json")], [Self.fixture("base-2.json")])
        // config and ads changed by 0 and 1 ms; feed and home by 5 ms.
        let lines = result.output.split(separator: "\n").map(String.init)
        let taskLines = lines.drop { $0 != "tasks by impact (run time):" }.dropFirst()
        #expect(taskLines.prefix(2).map { $0.split(separator: " ").first.map(String.init) } == ["feed", "home"])
        #expect(taskLines.contains("  (2 tasks changed by less than 5 ms)"))
    }

    // MARK: - Medians and order

    /// One slow run among three does not fail the check: the median is 1005 ms.
    @Test func oneSlowRunAmongSeveralDoesNotFail() throws {
        let result = diff(Self.fixtures("base"), Self.fixtures("one-slow"))
        #expect(result.status == 0)
        #expect(result.output.hasPrefix("base: 3 reports · new: 3 reports · medians"))
        let comparison = try ReportComparison(
            base: ReportFiles.load(Self.fixtures("base")), new: ReportFiles.load(Self.fixtures("one-slow")),
            thresholds: Thresholds(failOver: 0.1))
        #expect(comparison.criticalPath.base == .milliseconds(1000))
        #expect(comparison.criticalPath.new == .milliseconds(1005))
        // One slow run alone would have failed.
        #expect(diff(Self.fixtures("base"), [Self.fixture("one-slow-1.json")]).status == 1)
    }

    /// Two runs in three grew: the median grew, and the check fails.
    @Test func aRegressionInMostRunsFails() throws {
        #expect(diff(Self.fixtures("base"), Self.fixtures("slower")).status == 1)
        let comparison = try ReportComparison(
            base: ReportFiles.load(Self.fixtures("base")), new: ReportFiles.load(Self.fixtures("slower")),
            thresholds: Thresholds(failOver: 0.1, milestones: ["firstScreen"]))
        #expect(comparison.criticalPath.new == .milliseconds(1120))
        #expect(comparison.milestones.map(\.new) == [.milliseconds(1020)])
    }

    @Test func anEvenCountsMedianIsTheMeanOfTheMiddleTwo() throws {
        let comparison = try ReportComparison(
            base: ReportFiles.load([Self.fixture("base-1.json"), Self.fixture("base-2.json")]),
            new: ReportFiles.load([Self.fixture("base-1.json")]), thresholds: Thresholds())
        #expect(comparison.criticalPath.base == .milliseconds(1005))
    }

    @Test func tasksAreSortedByImpact() throws {
        let comparison = try ReportComparison(
            base: ReportFiles.load([Self.fixture("base-1.json")]),
            new: ReportFiles.load([Self.fixture("slower-1.json")]),
            thresholds: Thresholds())
        #expect(comparison.tasks.map(\.subject) == [.task("feed"), .task("ads"), .task("config"), .task("home")])
        #expect(comparison.tasks.first?.delta == .milliseconds(120))
    }

    /// Tasks in one report only are listed as new or gone, after the ones that changed.
    @Test func aTaskOnOneSideOnlyIsListedAsNewOrGone() throws {
        let result = diff(
            [Self.fixture("base-1.json")], [DiffTests.sharedFixture("run-report-1.0.json")], failOver: nil)
        #expect(result.status == 0)
        let lines = result.output.split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("  channel ") && $0.hasSuffix("new") })
        #expect(lines.contains { $0.hasPrefix("  ads ") && $0.hasSuffix("gone") })
    }

    // MARK: - Arguments

    @Test(arguments: [("10%", 0.10), ("10", 0.10), ("2.5%", 0.025), ("0%", 0.0)])
    func percentages(text: String, value: Double) throws {
        #expect(try Thresholds.percentage(text) == value)
    }

    @Test(arguments: [
        ("5ms", Duration.milliseconds(5)), ("1.5s", .milliseconds(1500)), ("250us", .microseconds(250)),
        ("250µs", .microseconds(250)), ("100ns", .nanoseconds(100)), ("5 ms", .milliseconds(5)),
    ])
    func durations(text: String, value: Duration) throws {
        #expect(try Thresholds.duration(text) == value)
    }

    @Test(arguments: ["fast", "-5ms", "5 parsecs", ""])
    func badDurationsAreNamed(text: String) {
        let error = #expect(throws: ReportToolError.self) { try Thresholds.duration(text) }
        #expect(error?.code == .badArgument)
        #expect(error?.message == "'\(text)' is not a duration such as 5ms, 1.5s or 250us")
    }

    static func sharedFixture(_ name: String) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Tests/Fixtures")
            .appendingPathComponent(name).path
    }
}
