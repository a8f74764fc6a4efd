import ConductorTestKit
import Testing

@testable import ConductorAssembly
@testable import ConductorCore
@testable import ConductorGate
@testable import ConductorGraph
@testable import ConductorHarmonizer
@testable import ConductorLaunch
@testable import ConductorReports

/// `Launcher.shutdown()`: undos in the reverse of the order tasks completed, each with its own
/// deadline, failures reported, only what succeeded, exactly once.
@Suite(.timeLimit(.minutes(1))) struct LauncherShutdownTests {
    private struct Refused: Error, CustomStringConvertible {
        var description: String { "refused" }
    }

    // MARK: - Order

    /// config ← pool ← cache, chained or by dependencies, and metrics on its own. cache and
    /// metrics are undone together (each waits for the other to have started, which would
    /// never happen if they ran one after the other), then pool, then config.
    @Test func undosRunInReverseDependencyOrderIndependentOnesTogether() async throws {
        let undone = Recorder<String>()
        let cacheStarted = Latch()
        let metricsStarted = Latch()
        let launcher = Launcher()
        try launcher.add(ClosureStartupTask("config", run: {}, undo: { undone.append("config") }))
        try launcher.add(ClosureStartupTask("pool", run: {}, undo: { undone.append("pool") }))
        try launcher.add(
            ClosureStartupTask(
                "cache", dependsOn: ["pool"], run: {},
                undo: {
                    cacheStarted.open()
                    await metricsStarted.wait()
                    #expect(!launcher.isLockedForTesting)
                    undone.append("cache")
                }))
        try launcher.add(
            ClosureStartupTask(
                "metrics", dependsOn: [], run: {},
                undo: {
                    metricsStarted.open()
                    await cacheStarted.wait()
                    undone.append("metrics")
                }))
        try await launcher.run()

        let shutdown = await launcher.shutdown()
        let order = undone.all
        #expect(Set(order.prefix(2)) == ["cache", "metrics"])
        #expect(order.suffix(2) == ["pool", "config"])
        #expect(shutdown.isSuccess)
        #expect(shutdown.undos.count == 4)
        #expect(shutdown["pool"].map { "\($0.outcome)" } == "undone")
        #expect(shutdown.startedAt >= (try await launcher.report()).duration)

        let report = try await launcher.report()
        #expect(report.outcome == .completed)
        #expect(report.shutdown?.undos.map(\.task) == shutdown.undos.map(\.task))
        let timeline = TimelineRenderer(width: 20).render(report)
        #expect(timeline.contains("shutdown in "))
        #expect(timeline.contains("undone"))
        #expect(timeline.hasSuffix("▓ undoing (shutdown)"))
    }

    /// Tasks added in order of addition are undone in the reverse of the order they were
    /// added, one at a time: each ran after the one before it.
    @Test func chainedTasksAreUndoneInReverse() async throws {
        let undone = Recorder<String>()
        let launcher = Launcher()
        for name in ["a", "b", "c", "d"] {
            try launcher.add(ClosureStartupTask(name, run: {}, undo: { undone.append(name) }))
        }
        try await launcher.run()
        await launcher.shutdown()
        #expect(undone.all == ["d", "c", "b", "a"])
    }

    // MARK: - Failures and deadlines

    /// pool's undo throws: reported with its error, and config (which pool depended on) is
    /// still undone after it.
    @Test func aFailingUndoIsReportedAndTheRestStillRun() async throws {
        let undone = Recorder<String>()
        let launcher = Launcher()
        try launcher.add(ClosureStartupTask("config", run: {}, undo: { undone.append("config") }))
        try launcher.add(ClosureStartupTask("pool", run: {}, undo: { throw Refused() }))
        try launcher.add(ClosureStartupTask("cache", run: {}, undo: { undone.append("cache") }))
        try await launcher.run()

        let shutdown = await launcher.shutdown()
        #expect(undone.all == ["cache", "config"])
        #expect(!shutdown.isSuccess)
        #expect(shutdown.undos.map(\.task) == ["cache", "pool", "config"])
        #expect(shutdown["pool"].map { "\($0.outcome)" } == "failed: refused")
        #expect("\(shutdown)".hasSuffix("2 undone, 1 failed"))
    }

    /// pool's undo never returns, even when cancelled: at its deadline (on the launcher's
    /// clock) it is reported as timed out and abandoned, and config's undo, which waited for
    /// it, runs. Nothing else is undone before then.
    @Test func aHangingUndoHitsItsDeadlineAndTheShutdownGoesOn() async throws {
        let clock = ManualClock()
        let undone = Recorder<String>()
        let poolUndoStarted = Latch()
        let never = Latch()
        let launcher = Launcher(clock: clock, undoTimeout: .seconds(5))
        try launcher.add(ClosureStartupTask("config", run: {}, undo: { undone.append("config") }))
        try launcher.add(
            ClosureStartupTask(
                "pool", run: {},
                undo: {
                    poolUndoStarted.open()
                    await never.wait()
                }))
        try await launcher.run()

        let shutdown = Task { await launcher.shutdown() }
        await poolUndoStarted.wait()
        await clock.sleepers(atLeast: 1, for: .launchUndoTimeout)
        #expect(undone.all.isEmpty)
        clock.advance(by: .seconds(5))
        let report = await shutdown.value
        #expect(undone.all == ["config"])
        #expect(report.undos.map(\.task) == ["pool", "config"])
        #expect(report["pool"].map { "\($0.outcome)" } == "timed out after 5.00 s")
        #expect(report["pool"]?.duration == .seconds(5))
        #expect(report["config"]?.startedAt == report["pool"]?.endedAt)
        never.open()
    }

    /// Cancelling the shutdown's task cuts it short at once, with `undoTimeout` at 30 s on a
    /// clock that never moves: pool's undo, which waits until it is cancelled, hears the
    /// cancel; cache's, which ignores it, is abandoned; config's (which waited for both) is
    /// not called, not even once cache's undo has ended: nothing begins before what depends
    /// on it has been undone. All three are reported cut short, which is no failure.
    @Test func cancellingTheShutdownCutsItsUndosShortAtOnce() async throws {
        let clock = ManualClock()
        let configCalls = Recorder<Bool>()
        let cacheUndoEnded = Latch()
        let poolUndoStarted = Latch()
        let cacheUndoStarted = Latch()
        let poolHeardTheCancel = Latch()
        let never = Latch()
        let launcher = Launcher(clock: clock, undoTimeout: .seconds(30))
        try launcher.add(
            ClosureStartupTask("config", run: {}, undo: { configCalls.append(Task.isCancelled) }))
        try launcher.add(
            ClosureStartupTask(
                "pool", dependsOn: ["config"], run: {},
                undo: {
                    poolUndoStarted.open()
                    if await !Latch().waitCancellable() { poolHeardTheCancel.open() }
                }))
        try launcher.add(
            ClosureStartupTask(
                "cache", dependsOn: ["config"], run: {},
                undo: {
                    cacheUndoStarted.open()
                    await never.wait()
                    cacheUndoEnded.open()
                }))
        try await launcher.run()

        let shutdown = Task { await launcher.shutdown() }
        await poolUndoStarted.wait()
        await cacheUndoStarted.wait()
        shutdown.cancel()
        let report = await shutdown.value
        await poolHeardTheCancel.wait()
        #expect(Set(report.undos.map(\.task)) == ["pool", "cache", "config"])
        #expect(report.undos.last?.task == "config")
        #expect(report["config"]?.duration == .zero)
        #expect(report.undos.allSatisfy { "\($0.outcome)" == "cut short: the shutdown was cancelled" })
        #expect(report.cutShort.count == 3)
        #expect(report.failures.isEmpty)
        #expect(report.isSuccess)
        #expect("\(report)".hasSuffix("0 undone, 3 cut short"))
        #expect((try await launcher.report()).shutdown?.cutShort.count == 3)
        never.open()
        await cacheUndoEnded.wait()
        #expect(configCalls.all.isEmpty, "config's undo was called")
    }

    /// As a task of an outer launcher, a shutdown cut short is no failure: `undo()` returns.
    @Test func anUndoCutShortIsNoFailureOfTheLaunchersUndo() async throws {
        let poolUndoStarted = Latch()
        let launcher = Launcher(clock: ManualClock(), undoTimeout: .seconds(30))
        try launcher.add(
            ClosureStartupTask(
                "pool", run: {},
                undo: {
                    poolUndoStarted.open()
                    await Latch().waitCancellable()
                }))
        try await launcher.run()

        let undo = Task { try await launcher.undo() }
        await poolUndoStarted.wait()
        undo.cancel()
        try await undo.value
        #expect(try await launcher.report().shutdown?.cutShort.map(\.task) == ["pool"])
    }

    // MARK: - Only what succeeded

    /// A shutdown while the launch runs cancels it first: config had succeeded and is undone;
    /// pool was running (and is abandoned), cache never started, version failed: none of them
    /// is undone.
    @Test func shutdownDuringTheLaunchCancelsItThenUndoesWhatSucceeded() async throws {
        let undone = Recorder<String>()
        let poolStarted = Latch()
        let never = Latch()
        let launcher = Launcher()
        try launcher.add(ClosureStartupTask("config", run: {}, undo: { undone.append("config") }))
        try launcher.add(
            ClosureStartupTask(
                "version", options: TaskOptions(failure: .optional), run: { throw Refused() },
                undo: { undone.append("version") }))
        try launcher.add(
            ClosureStartupTask(
                "pool",
                run: {
                    poolStarted.open()
                    await never.wait()
                }, undo: { undone.append("pool") }))
        try launcher.add(ClosureStartupTask("cache", run: {}, undo: { undone.append("cache") }))
        try launcher.start()
        await poolStarted.wait()

        let shutdown = await launcher.shutdown()
        #expect(undone.all == ["config"])
        #expect(shutdown.undos.map(\.task) == ["config"])
        let report = try await launcher.report()
        #expect(report.outcome == .cancelled)
        #expect(report["pool"]?.outcome.kind == .cancelled)
        #expect(report["version"]?.outcome.kind == .failed)
        never.open()
    }

    /// Before the launch there is nothing to undo, and the launch that follows starts
    /// cancelled: no task runs.
    @Test func shutdownBeforeTheLaunchUndoesNothingAndTheLaunchNeverRuns() async throws {
        let ran = Recorder<String>()
        let launcher = Launcher()
        try launcher.add(ClosureStartupTask("config", run: { ran.append("config") }))
        let shutdown = await launcher.shutdown()
        #expect(shutdown.undos.isEmpty)
        #expect(shutdown.isSuccess)
        try launcher.start()
        let report = try await launcher.report()
        #expect(report.outcome == .cancelled)
        #expect(ran.all.isEmpty)
    }

    // MARK: - Exactly once

    /// A second shutdown, asked while the first is undoing, waits for it and gets its report;
    /// no undo runs twice.
    @Test func aSecondShutdownJoinsTheFirst() async throws {
        let undos = Recorder<String>()
        let undoStarted = Latch()
        let finishUndo = Latch()
        let launcher = Launcher()
        try launcher.add(
            ClosureStartupTask(
                "pool", run: {},
                undo: {
                    undos.append("pool")
                    undoStarted.open()
                    await finishUndo.wait()
                }))
        try await launcher.run()

        let first = Task { await launcher.shutdown() }
        await undoStarted.wait()
        let second = Task { await launcher.shutdown() }
        finishUndo.open()
        let (one, two) = (await first.value, await second.value)
        #expect(undos.all == ["pool"])
        #expect(one.undos.map(\.task) == ["pool"])
        #expect(two.undos.map(\.task) == ["pool"])
        #expect(one.endedAt == two.endedAt)
        let third = await launcher.shutdown()
        #expect(third.undos.map(\.task) == ["pool"])
    }

    // MARK: - Nested launchers

    /// A launcher added as a task undoes its own tasks, in its own order, at its place in the
    /// outer order: outer.cache ran after it, outer.config before it.
    @Test func aNestedLauncherUndoesItsOwnTasks() async throws {
        let undone = Recorder<String>()
        let inner = Launcher("inner")
        try inner.add(ClosureStartupTask("inner.a", run: {}, undo: { undone.append("inner.a") }))
        try inner.add(ClosureStartupTask("inner.b", run: {}, undo: { undone.append("inner.b") }))
        let outer = Launcher()
        try outer.add(ClosureStartupTask("outer.config", run: {}, undo: { undone.append("outer.config") }))
        try outer.add(inner)
        try outer.add(ClosureStartupTask("outer.cache", run: {}, undo: { undone.append("outer.cache") }))
        try await outer.run()

        let shutdown = await outer.shutdown()
        #expect(undone.all == ["outer.cache", "inner.b", "inner.a", "outer.config"])
        #expect(shutdown.undos.map(\.task) == ["outer.cache", "inner", "outer.config"])
        #expect(shutdown.isSuccess)
        #expect((try await inner.report()).shutdown?.undos.map(\.task) == ["inner.b", "inner.a"])
    }

    /// A nested launcher whose undo failed fails its own undo in the outer shutdown, with an
    /// error that names the task.
    @Test func aNestedLaunchersFailedUndoIsReportedByName() async throws {
        let inner = Launcher("inner")
        try inner.add(ClosureStartupTask("inner.pool", run: {}, undo: { throw Refused() }))
        let outer = Launcher()
        try outer.add(inner)
        try await outer.run()

        let shutdown = await outer.shutdown()
        guard case .failed(let error as LaunchError) = try #require(shutdown["inner"]).outcome else {
            Issue.record("expected the nested launcher's undo to fail")
            return
        }
        #expect(error.code == .undoFailed)
        #expect(error.taskName == "inner.pool")
        #expect(error.message == "shutdown of 'inner': undo of 'inner.pool' failed: refused")
    }
}
