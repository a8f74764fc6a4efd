import ConductorTestKit
import Testing

/// The helper that keeps a caller that never ends from hanging a test run.
@Suite(.timeLimit(.minutes(1)))
struct AwaitAllTests {
    @Test func returnsTrueOnceEveryTaskEnded() async {
        let tasks = (0..<3).map { index in Task { index } }
        #expect(await awaitAll(tasks))
    }

    @Test func aCancelledWaitStopsWaitingAndCancelsTheTasks() async {
        let release = Latch()
        let started = Latch()
        // Ignores cancellation until released: what a hung caller looks like.
        let stuck = Task {
            started.open()
            await release.wait()
            return Task.isCancelled
        }
        await started.wait()
        let waiter = Task { await awaitAll([stuck]) }
        waiter.cancel()
        #expect(await waiter.value == false)
        release.open()
        #expect(await stuck.value, "the stuck task was cancelled as the wait gave up")
    }
}
