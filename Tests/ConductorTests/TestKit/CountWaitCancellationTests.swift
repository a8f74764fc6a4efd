import Conductor
import ConductorTestKit
import Testing

/// Every test kit wait for "at least N" ends when its task is cancelled, so a test waiting for
/// something that never comes fails at its time limit instead of hanging the run (CI once hung
/// for 30 minutes on such a wait). Each wait here can never be met; `awaitAll` bounds the
/// test: should a wait ignore the cancellation, the suite's time limit cancels the test, and
/// the test fails instead of hanging.
@Suite(.timeLimit(.minutes(1)))
struct CountWaitCancellationTests {
    /// Starts `wait` in a task, cancels the task once it has started, and returns whether the
    /// wait then ended. The cancellation may come before the wait registers or while it is
    /// suspended; `CountWaitersTests` pins each order down.
    private func endsWhenCancelled(_ wait: @escaping @Sendable () async -> Void) async -> Bool {
        let started = ConductorTestKit.Latch()
        let waiter = Task {
            started.open()
            await wait()
        }
        await started.wait()
        await Task.yield()  // most often the wait is suspended by now
        waiter.cancel()
        return await awaitAll([waiter])
    }

    @Test func manualExecutorJobsWaitEndsWhenCancelled() async {
        let executor = ManualExecutor()
        #expect(await endsWhenCancelled { await executor.jobs(atLeast: 1) })
        #expect(executor.pendingJobs == 0)
    }

    @Test func manualClockSleepersWaitEndsWhenCancelled() async {
        let clock = ManualClock()
        #expect(await endsWhenCancelled { await clock.sleepers(atLeast: 1) })
        #expect(await endsWhenCancelled { await clock.sleepers(atLeast: 1, for: .retryBackoff) })
        #expect(clock.sleeperCount == 0)
    }

    @Test func assemblyProbeWaitersWaitEndsWhenCancelled() async {
        let probe = AssemblyProbe()
        #expect(await endsWhenCancelled { await probe.waiters(atLeast: 1) })
        #expect(probe.waitCount == 0)
    }

    @Test func eventRecorderEventsWaitEndsWhenCancelled() async throws {
        let release = ConductorTestKit.Latch()
        var graph = TaskGraph()
        graph.add("held") { _ in await release.wait() }
        let run = try graph.start()
        let recorder = EventRecorder(run.events)
        // The run cannot end while "held" is held, so neither can its events.
        #expect(await endsWhenCancelled { await recorder.events(atLeast: .max) })
        #expect(await endsWhenCancelled { _ = await recorder.finished() })
        #expect(!recorder.isFinished)
        release.open()
        #expect(try await run.report().outcome == .completed)
    }
}
