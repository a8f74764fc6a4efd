import Conductor
import ConductorTestKit
import Testing

/// A structured run called from a task cancelled already ends cancelled with no body begun,
/// by construction: the run is cancelled before its driver exists.
///
/// The hook (`TaskGraph.holdsCallerAfterStartingDriver`) holds the caller right after it
/// started the driver, until the run has ended. Had the caller installed its cancellation
/// handler only after starting the driver, the driver would run the whole graph, uncancelled,
/// while the caller is held: every body would begin, deterministically, with no timing.
@Suite struct StructuredRunCancellationTests {
    /// Runs `body` in a task that cancelled itself before calling it, with the hook set.
    private func fromACancelledTask<Value: Sendable>(
        _ body: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        try await TaskGraph.$holdsCallerAfterStartingDriver.withValue(true) {
            // `Task {}` copies the task-local values bound here, the hook among them.
            try await Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await body()
            }.value
        }
    }

    private static func graph(_ began: Recorder<String>) -> TaskGraph {
        var graph = TaskGraph()
        for index in 0..<8 { graph.add("t\(index)") { _ in began.append("t\(index)") } }
        return graph
    }

    @Test func aGraphRunFromACancelledTaskBeginsNoBody() async throws {
        let began = Recorder<String>()
        let graph = Self.graph(began)
        let report = try await fromACancelledTask { try await graph.run(concurrencyLimit: 4) }
        #expect(began.all.isEmpty, "bodies began: \(began.all)")
        #expect(report.outcome == .cancelled)
        #expect(report.tasks.allSatisfy { $0.outcome.kind == .cancelled && $0.startedAt == nil })
    }

    @Test func aGraphRunWithABodyFromACancelledTaskBeginsNoTask() async throws {
        let began = Recorder<String>()
        let graph = Self.graph(began)
        let report = try await fromACancelledTask { try await graph.run { _ in } }
        #expect(began.all.isEmpty, "bodies began: \(began.all)")
        #expect(report.outcome == .cancelled)
    }

    @Test func aScheduleRunFromACancelledTaskBeginsNoBody() async throws {
        let began = Recorder<String>()
        let schedule = Schedule {
            Stage("only") {
                Step("a") { _ in began.append("a") }
                Step("b") { _ in began.append("b") }
            }
        }
        let report = try await fromACancelledTask { try await schedule.run() }
        #expect(began.all.isEmpty, "bodies began: \(began.all)")
        #expect(report.outcome == .cancelled)
    }

    @Test func aLauncherRunFromACancelledTaskBeginsNoTask() async throws {
        let began = Recorder<String>()
        let launcher = Launcher()
        try launcher.add(TestStartupTask("first") { began.append("first") })
        try launcher.add(TestStartupTask("second", dependencies: []) { began.append("second") })
        let error = try await fromACancelledTask { () async -> LaunchError? in
            do {
                try await launcher.run()
                return nil
            } catch {
                return error as? LaunchError
            }
        }
        #expect(began.all.isEmpty, "tasks began: \(began.all)")
        #expect(error?.code == .cancelled)
        let report = try await launcher.report()
        #expect(report.outcome == .cancelled)
        #expect(report.tasks.allSatisfy { $0.startedAt == nil })
    }

    /// A graph with no tasks has nothing to cancel: it completes, as its doc says.
    @Test func anEmptyGraphRunFromACancelledTaskCompletes() async throws {
        let report = try await fromACancelledTask { try await TaskGraph().run() }
        #expect(report.outcome == .completed)
    }

    /// Empty runs started at once share nothing. Making an empty run's node table wrote the
    /// count of the standard library's one shared empty array, which ThreadSanitizer reported
    /// as a race between two such runs (this suite's empty run and another, in CI's sanitizer
    /// step). Under the sanitizer, this test fails with that write back.
    @Test func emptyRunsStartedAtOnceShareNothing() async throws {
        try await withThrowingTaskGroup(of: RunOutcome.self) { group in
            for _ in 0..<16 { group.addTask { try await TaskGraph().run().outcome } }
            for try await outcome in group { #expect(outcome == .completed) }
        }
    }

    /// A `run()` whose own `start()` throws (here, validation: a task's dependency was removed
    /// before the launch) in a cancelled task leaves no cancel behind: once fixed, the launch
    /// runs. Before, it launched cancelled.
    @Test func aLauncherRunWhoseStartThrowsInACancelledTaskLeavesNoCancelBehind() async throws {
        let began = Recorder<String>()
        let launcher = Launcher()
        try launcher.add(TestStartupTask("config", dependencies: []))
        try launcher.add(TestStartupTask("home", dependencies: ["config"]) { began.append("home") })
        #expect(launcher.remove("config") == .prevented)
        let error = try await fromACancelledTask { () async -> LaunchError? in
            do {
                try await launcher.run()
                return nil
            } catch {
                return error as? LaunchError
            }
        }
        #expect(error?.code == .unknownDependency)
        try launcher.add(TestStartupTask("config", dependencies: []) { began.append("config") })
        try await launcher.run()
        #expect(began.all == ["config", "home"])
        #expect(try await launcher.report().outcome == .completed)
    }

    /// The hook changes nothing for a caller that is not cancelled: it only waits.
    @Test func theHookLetsAnUncancelledRunComplete() async throws {
        let began = Recorder<String>()
        let graph = Self.graph(began)
        let report = try await TaskGraph.$holdsCallerAfterStartingDriver.withValue(true) {
            try await graph.run(concurrencyLimit: 4)
        }
        #expect(report.outcome == .completed)
        #expect(Set(began.all) == Set((0..<8).map { "t\($0)" }))
    }
}
