import Conductor
import ConductorTestKit
import MetricsTestKit
import Testing

/// A launcher's shutdown metrics, recorded from its shutdown report.
@Suite struct ShutdownMetricsTests {
    /// Three chained tasks undone in reverse: `cache`'s undo throws at 0 s, `pool`'s misses its
    /// 10 s deadline, `config`'s succeeds at 10 s.
    @Test func aShutdownCountsAndTimesItselfAndEachUndoByOutcome() async throws {
        let metrics = TestMetrics()
        let clock = ManualClock()
        let poolUndoing = Latch()
        let launcher = Launcher(clock: clock, undoTimeout: .seconds(10), telemetry: Telemetry(metrics: metrics))
        try launcher.add(ClosureStartupTask("config", run: {}, undo: {}))
        try launcher.add(
            ClosureStartupTask(
                "pool", run: {},
                undo: {
                    poolUndoing.open()
                    await Latch().waitCancellable()
                }))
        try launcher.add(ClosureStartupTask("cache", run: {}, undo: { throw TelemetryTestFailure() }))
        try await launcher.run()

        let shutdown = Task { await launcher.shutdown() }
        await poolUndoing.wait()
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(10))
        let report = await shutdown.value
        #expect(!report.isSuccess)

        let shutdowns = "conductor_launch_shutdowns_total"
        #expect(try metrics.expectCounter(shutdowns, [("outcome", "failed")]).totalValue == 1)
        #expect(metrics.counters(label: shutdowns).count == 1)
        #expect(
            try metrics.expectTimer("conductor_launch_shutdown_duration_seconds").values == [10_000_000_000])
        let undos = "conductor_launch_undos_total"
        for outcome in ["undone", "failed", "timed_out"] {
            #expect(try metrics.expectCounter(undos, [("outcome", outcome)]).totalValue == 1, "\(outcome)")
        }
        let undoDurations = try metrics.expectTimer("conductor_launch_undo_duration_seconds").values
        #expect(undoDurations.sorted() == [0, 0, 10_000_000_000])
    }

    /// A shutdown cut short by its caller's cancel is no failure, as in `isSuccess`: it counts
    /// as `succeeded`, and its undo as `cancelled`.
    @Test func aShutdownCutShortCountsAsSucceeded() async throws {
        let metrics = TestMetrics()
        let poolUndoing = Latch()
        let launcher = Launcher(
            clock: ManualClock(), undoTimeout: .seconds(10), telemetry: Telemetry(metrics: metrics))
        try launcher.add(
            ClosureStartupTask(
                "pool", run: {},
                undo: {
                    poolUndoing.open()
                    await Latch().waitCancellable()
                }))
        try await launcher.run()

        let shutdown = Task { await launcher.shutdown() }
        await poolUndoing.wait()
        shutdown.cancel()
        #expect(await shutdown.value.isSuccess)
        let shutdowns = "conductor_launch_shutdowns_total"
        #expect(try metrics.expectCounter(shutdowns, [("outcome", "succeeded")]).totalValue == 1)
        #expect(metrics.counters(label: shutdowns).count == 1)
        let undos = "conductor_launch_undos_total"
        #expect(try metrics.expectCounter(undos, [("outcome", "cancelled")]).totalValue == 1)
    }
}
