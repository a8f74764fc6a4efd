import Conductor
import ConductorTestKit
import Testing

@Suite struct GraphCancellationTests {
    @Test func cancelMidRunEndsEveryTaskOnce() async throws {
        let started = Latch()
        let release = Latch()
        var graph = TaskGraph()
        graph.add("running") { _ in
            started.open()
            await release.wait()
            try Task.checkCancellation()
        }
        graph.add("pending", dependsOn: ["running"]) { _ in }
        graph.addMilestone("done", after: ["pending"])
        let run = try graph.start()
        await started.wait()
        run.cancel()
        release.open()
        let report = try await run.report()
        guard case .cancelled = report.outcome else {
            Issue.record("expected a cancelled run, got \(report.outcome)")
            return
        }
        #expect(report.tasks.map { "\($0.outcome)" } == ["cancelled", "cancelled"])
        await #expect(throws: GraphError.self) { try await run.reached("done") }
        var ends: [String: Int] = [:]
        for await event in run.events {
            switch event {
            case .taskSucceeded(let id, _), .taskFailed(let id, _, _), .taskTimedOut(let id, _),
                .taskSkipped(let id, _, _), .taskCancelled(let id, _):
                ends[id, default: 0] += 1
            default: break
            }
        }
        #expect(ends == ["running": 1, "pending": 1])
        run.cancel()  // cancelling a finished run does nothing
    }

    /// A detached task (one with a timeout) is abandoned at once on cancel, even if it never returns.
    @Test func cancelAbandonsWorkThatIgnoresCancellation() async throws {
        let never = Latch()
        let started = Latch()
        var graph = TaskGraph()
        graph.add("stuck", options: TaskOptions(timeout: .seconds(3600))) { _ in
            started.open()
            await never.wait()
        }
        let run = try graph.start(clock: ManualClock())
        await started.wait()
        run.cancel()
        let report = try await run.report()
        #expect("\(report["stuck"]!.outcome)" == "cancelled")
        never.open()
    }

    @Test func cancellingTheSurroundingTaskCancelsTheRun() async throws {
        let started = Latch()
        var graph = TaskGraph()
        graph.add("waits") { _ in
            started.open()
            try await Task.sleep(for: .seconds(3600))
        }
        graph.add("later", dependsOn: ["waits"]) { _ in }
        let owner = Task { try await graph.run() }
        await started.wait()
        owner.cancel()
        let report = try await owner.value
        guard case .cancelled = report.outcome else {
            Issue.record("expected a cancelled run, got \(report.outcome)")
            return
        }
        #expect(report.tasks.map { "\($0.outcome)" } == ["cancelled", "cancelled"])
    }

    /// Issue #34: a report waiter that gives up stops waiting and leaves the run going (it
    /// used to cancel the run); the run's own `cancel()` stops it.
    @Test func cancellingTheReportAwaiterLeavesAStartedRunGoing() async throws {
        let started = Latch()
        var graph = TaskGraph()
        graph.add("waits") { _ in
            started.open()
            try await Task.sleep(for: .seconds(3600))
        }
        let run = try graph.start()
        let owner = Task { try await run.report() }
        await started.wait()
        owner.cancel()
        await #expect(throws: CancellationError.self) { _ = try await owner.value }
        let waiter = Task { try await run.report() }
        run.cancel()
        let report = try await waiter.value
        #expect("\(report.outcome)" == "cancelled")
    }
}
