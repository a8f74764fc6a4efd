import ConductorTestKit
import Foundation
import Testing

@testable import ConductorAssembly
@testable import ConductorCore
@testable import ConductorGate
@testable import ConductorGraph
@testable import ConductorHarmonizer
@testable import ConductorLaunch
@testable import ConductorReports

/// Saved reports: what one version of Conductor writes, the next reads.
@Suite struct RunReportCodingTests {
    struct Offline: Error, CustomStringConvertible {
        var description: String { "offline" }
    }

    /// A report with every kind of task outcome and a failed run.
    private func everyOutcome() -> RunReport {
        func record(_ id: String, _ outcome: TaskOutcome, start: Duration?, end: Duration, stage: String? = nil)
            -> TaskRecord
        {
            TaskRecord(
                id: id, stage: stage, dependencies: id == "b" ? ["a"] : [], outcome: outcome, queuedAt: start,
                startedAt: start, endedAt: end, attempts: start == nil ? 0 : 2, placement: "global")
        }
        return RunReport(
            outcome: .failed(GraphError(.taskFailed, "required task 'c' failed: offline", taskID: "c")),
            tasks: [
                record("a", .succeeded, start: .zero, end: .milliseconds(10)),
                record(
                    "b", .timedOut(after: .nanoseconds(1_234_567)), start: .milliseconds(10), end: .milliseconds(12)),
                record("c", .failed(Offline()), start: .microseconds(3), end: .nanoseconds(20_000_001)),
                record("d", .skipped(dependency: "c"), start: nil, end: .milliseconds(21), stage: "extras"),
                record("e", .cancelled, start: nil, end: .milliseconds(21)),
                record("f", .failed(GraphError.timedOut("f", after: .seconds(1))), start: .zero, end: .seconds(1)),
            ],
            milestones: [(name: "firstScreen", at: .milliseconds(11))], duration: .milliseconds(21),
            criticalPath: ["a", "b"])
    }

    private func roundTrip<Report: Codable>(_ report: Report) throws -> Report {
        try JSONDecoder().decode(Report.self, from: JSONEncoder().encode(report))
    }

    private func expectSame(_ read: LaunchReport, _ written: LaunchReport) {
        expectSame(read.run, written.run)
    }

    /// Every field, compared through what `Equatable` can see: the outcome's kind and the
    /// failure's recorded type, code and message.
    private func expectSame(_ read: RunReport, _ written: RunReport) {
        #expect(read.outcome == written.outcome)
        #expect(read.duration == written.duration)
        #expect(read.criticalPath == written.criticalPath)
        #expect(read.milestones.map(\.name) == written.milestones.map(\.name))
        #expect(read.milestones.map(\.at) == written.milestones.map(\.at))
        #expect(read.tasks.count == written.tasks.count)
        for (read, written) in zip(read.tasks, written.tasks) {
            #expect(read.id == written.id)
            #expect(read.stage == written.stage)
            #expect(read.dependencies == written.dependencies)
            #expect(read.outcome.kind == written.outcome.kind)
            #expect("\(read.outcome)" == "\(written.outcome)")
            #expect(read.queuedAt == written.queuedAt)
            #expect(read.startedAt == written.startedAt)
            #expect(read.endedAt == written.endedAt)
            #expect(read.attempts == written.attempts)
            #expect(read.placement == written.placement)
        }
    }

    // MARK: - Round trips

    @Test func everyOutcomeSurvivesARoundTrip() throws {
        let written = everyOutcome()
        let read = try roundTrip(written)
        expectSame(read, written)
        // The failure is recorded apart: type, code for Conductor's own errors, message.
        let c = try #require(read["c"])
        guard case .failed(let error as RecordedFailure) = c.outcome else {
            Issue.record("c is \(c.outcome)")
            return
        }
        #expect(error == RecordedFailure(typeName: String(reflecting: Offline.self), code: nil, message: "offline"))
        guard case .failed(let timeout as RecordedFailure) = try #require(read["f"]).outcome else {
            Issue.record("f did not fail")
            return
        }
        #expect(timeout.typeName == "Conductor.GraphError")
        #expect(timeout.code == "timedOut")
        #expect(timeout.description == "\(GraphError.timedOut("f", after: .seconds(1)))")
    }

    /// A report read back and written again is the same JSON: nothing drifts between versions
    /// of a baseline that CI rewrites.
    @Test func aReadReportIsWrittenAgainUnchanged() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let first = try encoder.encode(everyOutcome())
        let second = try encoder.encode(JSONDecoder().decode(RunReport.self, from: first))
        #expect(String(decoding: first, as: UTF8.self) == String(decoding: second, as: UTF8.self))
    }

    @Test func aLaunchReportSurvivesARoundTrip() async throws {
        let clock = ManualClock()
        let launcher = Launcher(clock: clock)
        try launcher.add(TestStartupTask("channel") { try await clock.sleep(for: .seconds(1)) })
        try launcher.add(TestStartupTask("config") { try await clock.sleep(for: .seconds(2)) })
        try launcher.add(
            TestStartupTask("version", dependencies: [], options: TaskOptions(failure: .optional)) { throw Offline() })
        try launcher.addReadiness("firstScreen", after: ["config"])
        try launcher.start()
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(1))
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(2))
        let written = try await launcher.report()
        let read = try roundTrip(written)
        expectSame(read, written)
        #expect(TimelineRenderer().render(read) == TimelineRenderer().render(written))
        #expect(ChromeTrace(read).json == ChromeTrace(written).json)
    }

    /// A launch that was shut down keeps its undos in the saved report: each undo's task,
    /// outcome (an undo's error recorded like a task's) and times.
    @Test func aShutdownSurvivesARoundTrip() async throws {
        let launcher = Launcher()
        try launcher.add(ClosureStartupTask("config", run: {}, undo: {}))
        try launcher.add(ClosureStartupTask("pool", run: {}, undo: { throw Offline() }))
        try await launcher.run()
        await launcher.shutdown()
        let written = try await launcher.report()
        let read = try roundTrip(written)
        expectSame(read, written)
        let saved = try #require(read.shutdown)
        let original = try #require(written.shutdown)
        #expect(saved.undos.map(\.task) == original.undos.map(\.task))
        #expect(saved.undos.map { "\($0.outcome)" } == original.undos.map { "\($0.outcome)" })
        #expect(saved.undos.map(\.startedAt) == original.undos.map(\.startedAt))
        #expect(saved.undos.map(\.endedAt) == original.undos.map(\.endedAt))
        #expect(saved.startedAt == original.startedAt)
        #expect(saved.endedAt == original.endedAt)
        #expect(TimelineRenderer().render(read) == TimelineRenderer().render(written))
        // A report without a shutdown has no such field.
        let plain = String(decoding: try JSONEncoder().encode(everyOutcome()), as: UTF8.self)
        #expect(!plain.contains("shutdown"))
    }

    // MARK: - Versions

    /// A report written by format 1.0, committed as a file: every later 1.x reader reads it.
    /// It also carries fields this version does not know, which are ignored.
    @Test func theCommittedVersion1FixtureIsRead() throws {
        let report = try JSONDecoder().decode(
            RunReport.self, from: Data(contentsOf: Self.fixture("run-report-1.0.json")))
        #expect(report.outcome == .completed)
        #expect(report.duration == .milliseconds(1200))
        #expect(report.criticalPath == ["channel", "config", "home"])
        #expect(report.milestones.map(\.name) == ["firstScreen"])
        #expect(report.milestones.map(\.at) == [.milliseconds(800)])
        #expect(report.tasks.map(\.id) == ["channel", "config", "version", "home", "promo", "sku", "feed"])
        #expect(report["config"]?.waitTime == .milliseconds(50))
        #expect(report["config"]?.attempts == 2)
        #expect(report["home"]?.placement == "main actor")
        #expect(report["promo"]?.outcome.kind == .skipped(dependency: "version"))
        #expect(report["promo"]?.stage == "extras")
        #expect(report["promo"]?.startedAt == nil)
        #expect(report["sku"]?.outcome.kind == .timedOut(after: .milliseconds(500)))
        #expect("\(report["version"]!.outcome)" == "failed: offline")
        #expect(
            "\(report["feed"]!.outcome)"
                == "failed: GraphError.resultUnavailable: task 'feed' read the result of 'sku', which did not succeed")
        // Format 1.0 did not say what ran.
        #expect(report.identity == nil)
    }

    /// Format 1.1 says what ran: the launcher's name, the run's id and when it started.
    @Test func theCommittedVersion1_1FixtureSaysWhatRan() throws {
        let report = try JSONDecoder().decode(
            RunReport.self, from: Data(contentsOf: Self.fixture("run-report-1.1.json")))
        let identity = try #require(report.identity)
        #expect(identity.name == "launch")
        #expect(identity.id == "5C1D0E2A-3B4F-4C6D-8E9F-0A1B2C3D4E5F")
        #expect(RunIdentity.timeText(identity.startedAt) == "2026-11-27T12:49:02.125Z")
        #expect(abs(identity.startedAt.timeIntervalSince1970 - 1_795_783_742.125) < 0.000_1)
        #expect(report.tasks.map(\.id) == ["channel", "config", "home"])
    }

    /// Format 1.2 says which task added which as a subtask, and which a removal ended; older
    /// files say neither, and read back with no parent and nothing removed.
    @Test func theCommittedVersion1_2FixtureSaysParentsAndRemovals() throws {
        let report = try JSONDecoder().decode(
            RunReport.self, from: Data(contentsOf: Self.fixture("run-report-1.2.json")))
        #expect(report.tasks.map(\.id) == ["fib", "fib/left", "fib/left/left", "fib/right", "prefetch"])
        #expect(report.tasks.map(\.parent) == [nil, "fib", "fib/left", "fib", nil])
        #expect(report.tasks.map(\.wasRemoved) == [false, false, false, false, true])
        #expect(report["prefetch"]?.outcome.kind == .cancelled)
        for name in ["run-report-1.0.json", "run-report-1.1.json"] {
            let older = try JSONDecoder().decode(RunReport.self, from: Data(contentsOf: Self.fixture(name)))
            #expect(older.tasks.allSatisfy { $0.parent == nil && !$0.wasRemoved })
        }
    }

    /// `parent` and `removed` are written only for a task that has them.
    @Test func parentAndRemovedAreWrittenOnlyWhenSet() throws {
        let tasks = [
            TaskRecord(
                id: "fib", stage: nil, dependencies: [], outcome: .succeeded, queuedAt: .zero, startedAt: .zero,
                endedAt: .seconds(1), attempts: 1, placement: "global"),
            TaskRecord(
                id: "fib/left", stage: nil, dependencies: [], outcome: .cancelled, queuedAt: nil, startedAt: nil,
                endedAt: .seconds(1), attempts: 0, placement: "global", parent: "fib", wasRemoved: true),
        ]
        let report = RunReport(
            outcome: .completed, tasks: tasks, milestones: [], duration: .seconds(1), criticalPath: ["fib"])
        let json = String(decoding: try JSONEncoder().encode(report), as: UTF8.self)
        #expect(json.components(separatedBy: #""parent":"fib""#).count == 2)
        #expect(json.components(separatedBy: #""removed":true"#).count == 2)
        #expect(!json.contains(#""removed":false"#))
        let read = try roundTrip(report)
        #expect(read.tasks.map(\.parent) == [nil, "fib"])
        #expect(read.tasks.map(\.wasRemoved) == [false, true])
    }

    /// A failed launch and its shutdown, written by format 1.1 before the errors kept their
    /// underlying values (issue #34), committed as a file: a failed task, a skipped one, a
    /// failed undo and a timed-out one read back with their names, codes, messages and times.
    /// What a task or undo threw is a ``RecordedFailure`` now, and the run's error has no
    /// ``GraphError/underlyingError``: a file keeps the message, not the value.
    @Test func theCommittedFailedLaunchFixtureIsRead() throws {
        let report = try JSONDecoder().decode(
            LaunchReport.self, from: Data(contentsOf: Self.fixture("launch-report-failed-1.1.json")))
        guard case .failed(let error) = report.outcome else {
            Issue.record("expected a failed launch, got \(report.outcome)")
            return
        }
        #expect(error.code == .taskFailed)
        #expect(error.taskID == "config")
        #expect(error.message == "required task 'config' failed: offline")
        #expect(report.identity?.name == "coldStart")
        #expect(report.tasks.map(\.id) == ["database", "cache", "config", "home"])
        #expect(report.duration == .nanoseconds(1_939_014))
        #expect(report.criticalPath == ["cache", "config"])
        guard case .failed(let failure as RecordedFailure) = report["config"]?.outcome else {
            Issue.record("expected a recorded failure for config")
            return
        }
        #expect(failure.typeName == "ConductorTests.ZZFixtureGen.ConfigError")
        #expect(failure.code == nil)
        #expect(failure.message == "offline")
        #expect(report["home"]?.outcome.kind == .cancelled)
        #expect(report["home"]?.dependencies == ["config"])

        let shutdown = try #require(report.shutdown)
        #expect(shutdown.startedAt == .nanoseconds(3_645_965))
        #expect(shutdown.endedAt == .nanoseconds(104_195_332))
        #expect(shutdown.undos.map(\.task) == ["database", "cache"])
        #expect(!shutdown.isSuccess)
        guard case .failed(let undo as RecordedFailure) = shutdown["database"]?.outcome else {
            Issue.record("expected a recorded failure for database's undo")
            return
        }
        #expect(undo.message == "pool still busy")
        #expect(undo.typeName == "ConductorTests.ZZFixtureGen.PoolError")
        guard case .timedOut(let after) = shutdown["cache"]?.outcome else {
            Issue.record("expected cache's undo to have timed out")
            return
        }
        #expect(after == .milliseconds(100))
        // Written again, it reads back the same.
        let again = try roundTrip(report)
        #expect(again.outcome == report.outcome)
        #expect(again.shutdown?.undos.map(\.task) == ["database", "cache"])
    }

    /// A launch's report names its launcher; a graph's run has no name; every run has an id of
    /// its own and its start by the wall clock; all of it survives a round trip.
    @Test func aReportSaysWhatRan() async throws {
        let before = Date()
        let launcher = Launcher("coldStart")
        try launcher.add(ClosureStartupTask("config", run: {}))
        try await launcher.run()
        let launch = try await launcher.report().run
        var graph = TaskGraph()
        graph.add("a") { _ in }
        let first = try await graph.run()
        let second = try await graph.run()
        let after = Date()

        let identity = try #require(launch.identity)
        #expect(identity.name == "coldStart")
        #expect(first.identity?.name == nil)
        let ids = [launch, first, second].compactMap { $0.identity?.id }
        #expect(Set(ids).count == 3)
        for report in [launch, first, second] {
            let startedAt = try #require(report.identity?.startedAt)
            #expect(startedAt >= before && startedAt <= after)
        }
        let read = try roundTrip(launch)
        #expect(read.identity?.name == "coldStart")
        #expect(read.identity?.id == identity.id)
        #expect(RunIdentity.timeText(try #require(read.identity).startedAt) == RunIdentity.timeText(identity.startedAt))
        let json = String(decoding: try JSONEncoder().encode(first), as: UTF8.self)
        #expect(json.contains(#""version":"1.2""#))
        #expect(!json.contains(#""name""#))
    }

    /// A start time read back is written again as the same text, whatever its fraction of a
    /// millisecond was: a baseline that CI reads and rewrites does not drift.
    @Test(arguments: [1_795_783_742.1235, 1_795_783_742.9996, 1_795_783_742.0004, 1_795_783_742.125, 0.5, -1.25])
    func aStartTimeIsWrittenAgainUnchanged(seconds: Double) throws {
        let text = RunIdentity.timeText(Date(timeIntervalSince1970: seconds))
        #expect(RunIdentity.timeText(try #require(RunIdentity.time(text))) == text)
        let milliseconds = (seconds * 1000).rounded() / 1000
        #expect(abs(try #require(RunIdentity.time(text)).timeIntervalSince1970 - milliseconds) < 0.000_01)
    }

    @Test func startTimesAreISO8601InUTC() throws {
        #expect(RunIdentity.timeText(Date(timeIntervalSince1970: 1_795_783_742.9996)) == "2026-11-27T12:49:03.000Z")
        #expect(RunIdentity.timeText(Date(timeIntervalSince1970: 0.007)) == "1970-01-01T00:00:00.007Z")
        let plain = try #require(RunIdentity.time("2026-11-27T12:49:02Z"))
        #expect(plain.timeIntervalSince1970 == 1_795_783_742)
        #expect(RunIdentity.time("yesterday") == nil)
    }

    /// A launcher cancelled before its launch started still says what it was. (A waiter
    /// cancelled before the start no longer gets a made-up cancelled report: it stops waiting
    /// with `CancellationError`; see `ReportWaitingTests`.)
    @Test func aLaunchCancelledBeforeItStartedIsNamed() async throws {
        let launcher = Launcher("coldStart")
        try launcher.add(ClosureStartupTask("config", run: {}))
        launcher.cancel()
        try launcher.start()
        let report = try await launcher.report()
        #expect(report.outcome == .cancelled)
        #expect(report.identity?.name == "coldStart")
    }

    @Test func aNewerMajorVersionIsRefusedByName() throws {
        let json = #"{"format": "conductor.run-report", "version": "2.0", "tasks": "a new shape"}"#
        let error = try #require(throws: ReportFormatError.self) {
            try JSONDecoder().decode(RunReport.self, from: Data(json.utf8))
        }
        #expect(error.code == .unsupportedVersion)
        #expect(
            error.message == "the report is format version 2.0; this Conductor reads 1.x: update it to read the report")
    }

    @Test func aNewerMinorVersionIsRead() throws {
        let json = #"""
            {"format": "conductor.run-report", "version": "1.7", "outcome": {"kind": "cancelled"}, "durationNs": 5,
             "criticalPath": [], "milestones": [], "tasks": [], "hotPath": {"cpu": 3}}
            """#
        let report = try JSONDecoder().decode(RunReport.self, from: Data(json.utf8))
        #expect(report.outcome == .cancelled)
        #expect(report.duration == .nanoseconds(5))
    }

    @Test func otherJSONIsNotAReport() throws {
        let error = try #require(throws: ReportFormatError.self) {
            try JSONDecoder().decode(RunReport.self, from: Data(#"{"traceEvents": []}"#.utf8))
        }
        #expect(error.code == .notAReport)
        #expect(error.message == "not a Conductor run report: it has no format field")
    }

    @Test func anOutcomeFromALaterVersionIsNamed() throws {
        let json = #"""
            {"format": "conductor.run-report", "version": "1.0", "outcome": {"kind": "completed"}, "durationNs": 5,
             "criticalPath": [], "milestones": [], "tasks": [{"id": "a", "dependencies": [],
             "outcome": {"kind": "paused"}, "endedAtNs": 5, "attempts": 1, "placement": "global"}]}
            """#
        let error = try #require(throws: ReportFormatError.self) {
            try JSONDecoder().decode(RunReport.self, from: Data(json.utf8))
        }
        #expect(error.code == .unknownValue)
        #expect(error.message == "unknown task outcome 'paused': the report was written by a newer Conductor")
    }

    static func fixture(_ name: String) -> URL {
        URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appending(path: "Fixtures").appending(path: name)
    }
}
