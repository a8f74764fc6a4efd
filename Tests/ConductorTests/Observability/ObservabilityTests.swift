import ConductorTestKit
import Foundation
import Logging
import Testing

@testable import ConductorAssembly
@testable import ConductorCore
@testable import ConductorGate
@testable import ConductorGraph
@testable import ConductorHarmonizer
@testable import ConductorLaunch
@testable import ConductorReports

@Suite struct ObservabilityTests {
    /// A launch on a manual clock: `channel` takes 1 s, `config` (after it) 2 s, `version`
    /// runs beside them for 1 s, and `firstScreen` is ready once `config` has ended.
    private func launchReport() async throws -> RunReport {
        let clock = ManualClock()
        let launcher = Launcher(clock: clock)
        try launcher.add(TestStartupTask("channel") { try await clock.sleep(for: .seconds(1)) })
        try launcher.add(TestStartupTask("config") { try await clock.sleep(for: .seconds(2)) })
        try launcher.add(TestStartupTask("version", dependencies: []) { try await clock.sleep(for: .seconds(1)) })
        try launcher.addReadiness("firstScreen", after: ["config"])
        try launcher.start()
        await clock.sleepers(atLeast: 2)
        clock.advance(by: .seconds(1))
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(2))
        return try await launcher.report().run
    }

    @Test func chromeTraceIsValidJSONWithOneCompleteEventPerTask() async throws {
        let report = try await launchReport()
        let json = ChromeTrace(report, processName: "launch").json
        let object = try #require(JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let events = try #require(object["traceEvents"] as? [[String: Any]])
        let complete = events.filter { $0["ph"] as? String == "X" }
        #expect(complete.compactMap { $0["name"] as? String }.sorted() == ["channel", "config", "version"])
        let config = try #require(complete.first { $0["name"] as? String == "config" })
        #expect(config["ts"] as? Int == 1_000_000)
        #expect(config["dur"] as? Int == 2_000_000)
        let args = try #require(config["args"] as? [String: Any])
        #expect(args["outcome"] as? String == "succeeded")
        #expect(args["critical"] as? Bool == true)
        // version overlaps channel, so the two never share a lane
        let channel = try #require(complete.first { $0["name"] as? String == "channel" })
        let version = try #require(complete.first { $0["name"] as? String == "version" })
        #expect(channel["tid"] as? Int != version["tid"] as? Int)
        let instants = events.filter { $0["ph"] as? String == "i" }
        #expect(instants.compactMap { $0["name"] as? String } == ["firstScreen"])
        #expect(instants.first?["ts"] as? Int == 3_000_000)
    }

    @Test func reportHasTheCriticalPathAndTimes() async throws {
        let report = try await launchReport()
        #expect(report.duration == .seconds(3))
        #expect(report.criticalPath == ["channel", "config"])
        #expect(report["config"]?.runTime == .seconds(2))
        #expect(report["config"]?.waitTime == .zero)
        #expect(report["version"]?.placement == "global")
    }

    @Test func timelineHasOneRowPerTaskWithBarsInTime() async throws {
        let report = try await launchReport()
        let text = TimelineRenderer(width: 30).render(report)
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines[0] == "completed in 3.00 s · critical path: channel → config")
        let rows = lines.filter { $0.contains("|") }
        #expect(rows.count == 3)
        let channel = try #require(rows.first { $0.hasPrefix("channel") })
        #expect(channel.contains("|" + String(repeating: "█", count: 10) + String(repeating: " ", count: 20) + "|"))
        let config = try #require(rows.first { $0.hasPrefix("config") })
        #expect(config.contains("|" + String(repeating: " ", count: 10) + String(repeating: "█", count: 20) + "|"))
        #expect(config.hasPrefix("config  *"))
        #expect(lines.dropLast().last == "◆ firstScreen at 3.00 s")
        #expect(
            lines.last
                == "* critical path · ░ queued (dependencies done, waiting for a worker) · █ running · ◆ milestone")
    }

    /// The longest id used to push its own row one column right: padding added a space to a
    /// text that already filled the id column.
    @Test func everyRowsBarStartsInTheSameColumnWhateverTheIdsLengths() throws {
        func record(_ id: String, start: Duration, end: Duration) -> TaskRecord {
            TaskRecord(
                id: id, stage: nil, dependencies: [], outcome: .succeeded, queuedAt: start, startedAt: start,
                endedAt: end, attempts: 1, placement: "global")
        }
        let report = RunReport(
            outcome: .completed,
            tasks: [
                record("a", start: .zero, end: .seconds(1)),
                record("longer-id", start: .seconds(1), end: .seconds(2)),
            ],
            milestones: [], duration: .seconds(2), criticalPath: ["a", "longer-id"])
        let lines = TimelineRenderer(width: 10).render(report).split(separator: "\n").map(String.init)
        let rows = lines.filter { $0.contains("|") }
        #expect(rows.count == 2)
        // "longer-id" is 9 columns, then " * |": every bar's left edge is column 12.
        #expect(rows.map { $0.prefix { $0 != "|" }.count } == [12, 12])
        // The axis's 0 sits on that edge.
        #expect(lines[1].prefix { $0 != "0" }.count == 12)
    }

    @Test func eventLoggerWritesStructuredLines() async throws {
        let handler = CapturingLogHandler()
        let logger = Logger(label: "test") { _ in handler }
        var graph = TaskGraph()
        graph.add("a") { _ in }
        let run = try graph.start()
        let sink = GraphEventLogger(logger)
        for await event in run.events { sink.log(event) }
        sink.log(try await run.report())
        let messages = handler.lines.all.map(\.message)
        #expect(messages == ["task queued", "task started", "task succeeded", "run finished", "run report"])
        #expect(handler.lines.all[2].metadata["task"] == "a")
    }
}
