import ConductorTestKit
import Testing

@testable import ConductorGraph
@testable import ConductorLaunch

/// One contract for waiting on a report: a waiter whose task is cancelled stops waiting
/// (`CancellationError`) and leaves the run going; the structured `run()` still cancels its
/// run with its task.
@Suite(.timeLimit(.minutes(1))) struct ReportWaitingTests {
    // MARK: - GraphRun

    /// The cancelled waiter returns while the task still runs; the run ends normally once the
    /// task is let go, and another waiter gets its report.
    @Test func aCancelledGraphReportWaiterStopsWaitingAndTheRunGoesOn() async throws {
        let started = Latch()
        let release = Latch()
        var graph = TaskGraph()
        graph.add("slow") { _ in
            started.open()
            await release.wait()
        }
        let run = try graph.start()
        await started.wait()
        let waiter = Task { try await run.report() }
        waiter.cancel()
        await #expect(throws: CancellationError.self) { _ = try await waiter.value }
        #expect(!release.isOpen)  // it returned while the task was still running

        let other = Task { try await run.report() }
        release.open()
        let report = try await other.value
        #expect(report.outcome == .completed)
        #expect(report["slow"]?.outcome.isSuccess == true)
        #expect(try await run.report().outcome == .completed)
    }

    /// `TaskGraph.run()` is structured: cancelling its task cancels the run.
    @Test func cancellingTheStructuredGraphRunStillCancelsTheRun() async throws {
        let started = Latch()
        var graph = TaskGraph()
        graph.add("waits") { _ in
            started.open()
            try await Task.sleep(for: .seconds(3600))
        }
        let owner = Task { try await graph.run() }
        await started.wait()
        owner.cancel()
        #expect(try await owner.value.outcome == .cancelled)
    }

    // MARK: - Launcher

    @Test func aCancelledLauncherReportWaiterStopsWaitingAndTheLaunchGoesOn() async throws {
        let started = Latch()
        let release = Latch()
        let launcher = Launcher("app")
        try launcher.add(
            ClosureStartupTask("slow") {
                started.open()
                await release.wait()
            })
        try launcher.start()
        await started.wait()
        let waiter = Task { try await launcher.report() }
        waiter.cancel()
        await #expect(throws: CancellationError.self) { _ = try await waiter.value }
        #expect(!release.isOpen)

        let other = Task { try await launcher.report() }
        release.open()
        #expect(try await other.value.outcome == .completed)
        #expect(try await launcher.report()["slow"]?.outcome.isSuccess == true)
    }

    /// Before the start there is no launch to wait for: a cancelled waiter stops waiting, and
    /// the launch, started afterwards, is not cancelled by it.
    @Test func aCancelledWaiterBeforeTheStartLeavesTheLaunchAlone() async throws {
        let launcher = Launcher("app")
        try launcher.add(ClosureStartupTask("config") {})
        let waiter = Task { try await launcher.report() }
        waiter.cancel()
        await #expect(throws: CancellationError.self) { _ = try await waiter.value }
        try await launcher.run()
        #expect(try await launcher.report().outcome == .completed)
    }

    /// `Launcher.run()` is structured: cancelling its task cancels the launch.
    @Test func cancellingTheStructuredLaunchStillCancelsIt() async throws {
        let started = Latch()
        let launcher = Launcher("app")
        try launcher.add(
            ClosureStartupTask("waits") {
                started.open()
                try await Task.sleep(for: .seconds(3600))
            })
        let owner = Task { try await launcher.run() }
        await started.wait()
        owner.cancel()
        let error = await #expect(throws: LaunchError.self) { try await owner.value }
        #expect(error?.code == .cancelled)
        #expect(try await launcher.report().outcome == .cancelled)
    }
}
