import Conductor
import ConductorTestKit
import Foundation
import Logging
import Testing

/// Schedules and launchers add marker nodes with internal ids (stage barriers, launch-chain
/// links). Those ids must never reach a message, an event, a report or a rendering: every
/// string the user can see names only what the user wrote.
@Suite struct InternalNameTests {
    /// The prefix every internal marker id starts with.
    static let markerPrefix = "\u{1}"

    // MARK: - Stage order

    @Test func aDependencyOnALaterStageHasItsOwnError() throws {
        let schedule = Schedule {
            Stage("a") { Step("x", dependsOn: ["y"]) { _ in } }
            Stage("b") { Step("y") { _ in } }
        }
        let error = try #require(throws: GraphError.self) { try schedule.validate() }
        #expect(error.code == .laterStage)
        #expect(error.message == "step 'x' in stage 'a' depends on 'y', which runs in the later stage 'b'")
        #expect(error.taskID == "x")
    }

    @Test func aDependencyOnAnEarlierStageOrTheSameStageIsFine() async throws {
        let schedule = Schedule {
            Stage("a") { Step("w") { _ in } }
            Stage("b") {
                Step("x", dependsOn: ["w", "y"]) { _ in }
                Step("y") { _ in }
            }
        }
        try schedule.validate()
        #expect(try await schedule.run(clock: ManualClock()).isSuccess)
    }

    /// A real cycle that runs through a stage barrier (via a task added to the schedule's
    /// graph) is reported with the stage's name where the barrier is.
    @Test func aCycleThroughAStageBarrierNamesOnlyWhatTheUserWrote() throws {
        var schedule = Schedule {
            Stage("a") { Step("x", dependsOn: ["t"]) { _ in } }
            Stage("b") { Step("y") { _ in } }
        }
        schedule.graph.add("t", dependsOn: ["y"]) { _ in }
        let error = try #require(throws: GraphError.self) { try schedule.validate() }
        #expect(error.code == .cycle)
        #expect(!error.message.contains(Self.markerPrefix))
        #expect(error.message == "dependencies form a loop: x → t → y → stage 'b' → x")
    }

    /// Removing a step used to leave the next stage's barrier naming it: "task '\u{1}stage 1 b'
    /// depends on unknown id 'x'".
    @Test func removingAStepKeepsTheStageOrder() async throws {
        let order = Recorder<String>()
        var schedule = Schedule {
            Stage("a") {
                Step("w") { _ in order.append("w") }
                Step("x") { _ in order.append("x") }
            }
            Stage("b") { Step("y") { _ in order.append("y") } }
        }
        let removed = [schedule.graph.remove("x"), schedule.graph.remove("w")]
        #expect(removed == [true, true])
        try schedule.validate()
        #expect(try await schedule.run(clock: ManualClock()).isSuccess)
        #expect(order.all == ["y"])

        var gap = Schedule {
            Stage("a") { Step("w") { _ in } }
            Stage("b") { Step("x") { _ in } }
            Stage("c") { Step("y") { _ in } }
        }
        let removedX = gap.graph.remove("x")
        #expect(removedX)
        let run = try gap.start(clock: ManualClock())
        var events: [String] = []
        for await event in run.events {
            switch event {
            case .taskSucceeded(let id, _): events.append("\(id) succeeded")
            case .taskQueued(let id, _): events.append("\(id) queued")
            default: break
            }
        }
        #expect(try await run.report().isSuccess)
        let wEnded = try #require(events.firstIndex(of: "w succeeded"))
        let yQueued = try #require(events.firstIndex(of: "y queued"))
        #expect(wEnded < yQueued, "stage 'c' still waits for stage 'a': \(events)")
    }

    // MARK: - Launch chains

    /// A launcher's tasks can form a cycle only by being removed and added back with
    /// dependencies; it is reported as a cycle (not an unknown dependency), by task names.
    @Test func aLaunchCycleIsReportedByTaskNames() throws {
        let launcher = Launcher(clock: ManualClock())
        try launcher.add(TestStartupTask("first"))
        try launcher.add(TestStartupTask("a", dependencies: []))
        try launcher.add(TestStartupTask("b", dependencies: ["a"]))
        launcher.remove("a")
        try launcher.add(TestStartupTask("a", dependencies: ["b"]))
        try launcher.add(TestStartupTask("last"))
        let error = try #require(throws: LaunchError.self) { try launcher.start() }
        #expect(error.code == .cycle)
        #expect(error.message == "dependencies form a loop: b → a → b")
    }

    // MARK: - Everything a run shows

    @Test func noUserVisibleStringNamesAMarker() async throws {
        let handler = CapturingLogHandler()
        let logger = Logger(label: "test") { _ in handler }

        let schedule = Schedule {
            Stage("basics") { Step("basicInfo") { _ in } }
            Milestone("firstScreen")
            Stage("empty") {}
            Stage("sale") {
                Step("saleInfo", dependsOn: ["basicInfo"]) { _ in }
                Step("broken", options: TaskOptions(failure: .optional)) { _ in throw Offline() }
            }
            Stage("shipping") { Step("freight", dependsOn: ["broken"]) { _ in } }
            Milestone("fullPage")
        }
        let run = try schedule.start(clock: ManualClock())
        run.log(to: logger)
        var strings: [String] = []
        for await event in run.events { strings.append("\(event)") }
        let scheduleReport = try await run.report()

        let launcher = Launcher(clock: ManualClock(), logger: logger)
        try launcher.add(TestStartupTask("channel"))
        try launcher.add(TestStartupTask("config"))
        try launcher.add(TestStartupTask("version", options: TaskOptions(failure: .optional)) { throw Offline() })
        try launcher.add(TestStartupTask("home", dependencies: ["config"]))
        try launcher.addReadiness("firstScreen", after: ["home"])
        try launcher.start()
        strings.append("\(try await launcher.ready("firstScreen"))")
        let launchReport = try await launcher.report()
        for await event in launcher.events { strings.append("\(event)") }

        for report in [scheduleReport, launchReport.run] {
            GraphEventLogger(logger).log(report)
            strings.append("\(report.outcome)")
            strings += report.criticalPath + report.milestones.map(\.name)
            for task in report.tasks { strings += [task.id, "\(task)", "\(task.outcome)"] + task.dependencies }
            strings.append(TimelineRenderer().render(report))
            strings.append(ChromeTrace(report).json)
            strings.append(HTMLTimelineRenderer().render(report))
            strings.append(String(decoding: try JSONEncoder().encode(report), as: UTF8.self))
        }
        for line in handler.lines.all {
            strings.append(line.message)
            strings.append("\(line.metadata)")
        }
        #expect(strings.count > 20)
        let leaks = strings.filter { $0.contains(Self.markerPrefix) || $0.contains("\\u0001") }
        #expect(leaks.isEmpty, "marker ids leaked: \(leaks)")
    }

    struct Offline: Error {}
}
