import ConductorTestKit
import Foundation
import Testing

@testable import ConductorGraph
@testable import ConductorLaunch
@testable import ConductorReports

/// Conductor's errors keep the error behind them as a value beside the message, so a caller
/// matches it (`as? ConfigError`) instead of reading text; equality stays on code and message.
@Suite struct UnderlyingErrorTests {
    enum ConfigError: Error, Equatable { case offline, corrupt }
    struct PoolError: Error, Equatable { var pool: String }

    // MARK: - GraphError

    @Test func aFailedRequiredTaskKeepsWhatItsBodyThrew() async throws {
        var graph = TaskGraph()
        graph.add("config") { _ in throw ConfigError.offline }
        let report = try await graph.run()
        guard case .failed(let error) = report.outcome else {
            Issue.record("expected a failed run, got \(report.outcome)")
            return
        }
        #expect(error.code == .taskFailed)
        #expect(error.underlyingError as? ConfigError == .offline)
        #expect(error.message == "required task 'config' failed: offline")
    }

    @Test func aSkippedOrTimedOutTaskHasNoUnderlyingError() async throws {
        var graph = TaskGraph()
        graph.add("slow", options: TaskOptions(timeout: .milliseconds(1))) { _ in
            try await Task.sleep(for: .seconds(3600))
        }
        let timedOut = try await graph.run()
        guard case .failed(let error) = timedOut.outcome else {
            Issue.record("expected a failed run, got \(timedOut.outcome)")
            return
        }
        #expect(error.code == .timedOut)
        #expect(error.underlyingError == nil)

        var skipping = TaskGraph()
        skipping.add("a", options: TaskOptions(failure: .optional)) { _ in throw ConfigError.offline }
        skipping.add("b", dependsOn: ["a"]) { _ in }
        guard case .failed(let skipped) = try await skipping.run().outcome else {
            Issue.record("expected a failed run")
            return
        }
        #expect(skipped.taskID == "b")
        #expect(skipped.underlyingError == nil)
    }

    @Test func equalityAndHashingIgnoreTheUnderlyingError() {
        let offline = GraphError(.taskFailed, "required task 'a' failed", taskID: "a", underlying: ConfigError.offline)
        let corrupt = GraphError(.taskFailed, "required task 'a' failed", taskID: "a", underlying: ConfigError.corrupt)
        let none = GraphError(.taskFailed, "required task 'a' failed", taskID: "a")
        #expect(offline == corrupt)
        #expect(offline == none)
        #expect(Set([offline, corrupt, none]).count == 1)
        #expect(offline != GraphError(.taskFailed, "required task 'b' failed", taskID: "b"))

        let launchOffline = LaunchError(.taskFailed, "m", taskName: "a", underlying: ConfigError.offline)
        #expect(launchOffline == LaunchError(.taskFailed, "m", taskName: "a"))
        #expect(Set([launchOffline, LaunchError(.taskFailed, "m", taskName: "a")]).count == 1)
    }

    /// The live report keeps the value; a report read back from JSON has only the message.
    @Test func aSavedReportKeepsTheMessageButNotTheValue() async throws {
        var graph = TaskGraph()
        graph.add("config") { _ in throw ConfigError.offline }
        let live = try await graph.run()
        let saved = try JSONDecoder().decode(RunReport.self, from: JSONEncoder().encode(live))
        guard case .failed(let liveError) = live.outcome, case .failed(let savedError) = saved.outcome else {
            Issue.record("expected failed runs")
            return
        }
        #expect(liveError.underlyingError as? ConfigError == .offline)
        #expect(savedError.underlyingError == nil)
        #expect(savedError == liveError)
        guard case .failed(let recorded) = saved["config"]?.outcome else {
            Issue.record("expected a failed task")
            return
        }
        #expect(recorded is RecordedFailure)
    }

    // MARK: - LaunchError

    @Test func aFailedLaunchThrowsTheTasksOwnError() async throws {
        let launcher = Launcher("app")
        try launcher.add(ClosureStartupTask("config") { throw ConfigError.corrupt })
        let error = await #expect(throws: LaunchError.self) { try await launcher.run() }
        #expect(error?.code == .taskFailed)
        #expect(error?.taskName == "config")
        #expect(error?.underlyingError as? ConfigError == .corrupt)
        #expect(error?.undoFailures.isEmpty == true)
    }

    /// A nested launcher's `undo()` lists each failed undo with its task and error; the first
    /// thrown error is the underlying one.
    @Test func undoFailedListsEachFailureWithItsTaskAndError() async throws {
        let launcher = Launcher("inner", undoTimeout: .seconds(60))
        try launcher.add(ClosureStartupTask("db", run: {}, undo: { throw PoolError(pool: "db") }))
        try launcher.add(
            ClosureStartupTask("cache", dependsOn: ["db"], run: {}, undo: { throw PoolError(pool: "cache") }))
        try launcher.add(ClosureStartupTask("log", dependsOn: [], run: {}, undo: {}))
        try await launcher.run()
        let error = await #expect(throws: LaunchError.self) { try await launcher.undo() }
        #expect(error?.code == .undoFailed)
        let failures = try #require(error?.undoFailures)
        #expect(failures.map(\.task) == ["cache", "db"])
        #expect(failures.map { $0.outcome.error as? PoolError } == [PoolError(pool: "cache"), PoolError(pool: "db")])
        #expect(error?.underlyingError as? PoolError == PoolError(pool: "cache"))
        #expect(
            error?.message
                == "shutdown of 'inner': undo of 'cache' failed: PoolError(pool: \"cache\"); 'db' failed: PoolError(pool: \"db\")"
        )
    }
}
