import ConductorTestKit
import Testing

@testable import ConductorCore
@testable import ConductorGraph

/// A task with a timeout alone runs its body on its worker, under a deadline the run keeps in
/// its state machine (``GraphDeadlines``), instead of in a task of its own: at the deadline
/// the task ends timed out and the worker is let go, its place given back at once.
@Suite(.timeLimit(.minutes(1))) struct GraphDeadlineTests {
    // MARK: - The heap

    /// Seeded random deadlines come out in order, each once, and a push starts a timer only
    /// when none wakes by then.
    @Test(arguments: [1, 2, 3, 42] as [UInt64]) func deadlinesComeOutInOrder(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var deadlines = GraphDeadlines()
        var pushed: [(at: Int64, node: Int32)] = []
        var wake: Int64?
        for node in 0..<200 {
            let at = Int64(random.next() % 1_000)
            let start = deadlines.push(at, node: Int32(node))
            if let wake, wake <= at {
                #expect(start == nil)
            } else {
                #expect(start?.wake == at)
                wake = at
            }
            pushed.append((at, Int32(node)))
        }
        var popped: [(at: Int64, node: Int32)] = []
        var now: Int64 = 0
        while popped.count < pushed.count {
            while let node = deadlines.popDue(now: now) {
                popped.append((pushed[Int(node)].at, node))
            }
            now += 7
        }
        #expect(popped.map(\.at) == pushed.map(\.at).sorted())
        #expect(Set(popped.map(\.node)).count == pushed.count)
        #expect(deadlines.popDue(now: .max) == nil)
    }

    /// A replaced timer's generation finds nothing to do; the current one ends when nothing is
    /// pending, and the next push starts another.
    @Test func aReplacedTimerEndsAndAnEmptyHeapEndsTheTimer() throws {
        var deadlines = GraphDeadlines()
        let pushedFirst = deadlines.push(100, node: 0)
        let first = try #require(pushedFirst)
        let pushedSecond = deadlines.push(50, node: 1)
        let second = try #require(pushedSecond)
        #expect(second.generation != first.generation)
        #expect(deadlines.timerSleeps(first.generation) == nil)
        #expect(deadlines.popDue(now: 100) == 1)
        #expect(deadlines.popDue(now: 100) == 0)
        #expect(deadlines.timerSleeps(second.generation) == nil)
        #expect(deadlines.wake == nil)
        #expect(deadlines.push(300, node: 2)?.wake == 300)
    }

    // MARK: - Runs

    /// A timeout alone makes no task of its own: the spec is plain and the node has a deadline;
    /// with retries it still runs in a task of its own.
    @Test func aTimeoutAloneRunsOnTheWorker() {
        let timed = TaskSpec.make(operation: .globalVoid { _ in }, options: TaskOptions(timeout: .seconds(1)))
        #expect(timed.isPlain && !timed.runsInOwnTask && timed.hasDeadlineOnWorker)
        let retried = TaskSpec.make(
            operation: .globalVoid { _ in }, options: TaskOptions(timeout: .seconds(1), retry: .attempts(2)))
        #expect(!retried.isPlain && retried.runsInOwnTask && !retried.hasDeadlineOnWorker)
    }

    /// Under `concurrencyLimit: 1`, a body stuck past its deadline gives its place back at the
    /// deadline: the next task runs while it is still stuck, and the stuck body, let go, sees
    /// its worker's task cancelled once it goes on.
    @Test func aBodyPastItsDeadlineIsLetGoAndItsPlaceGivenBack() async throws {
        let clock = ManualClock()
        let stuck = Latch()
        let sawCancellation = Recorder<Bool>()
        let returned = Latch()
        var graph = TaskGraph()
        graph.add("stuck", options: TaskOptions(timeout: .seconds(2), failure: .optional)) { _ in
            await stuck.wait()
            sawCancellation.append(Task.isCancelled)
            returned.open()
        }
        graph.add("other") { _ in }
        let run = try graph.start(concurrencyLimit: 1, clock: clock)
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(2))
        let report = try await run.report()
        #expect("\(report["stuck"]!.outcome)" == "timed out after 2.00 s")
        #expect(report["stuck"]?.endedAt == .seconds(2))
        #expect(report["other"]?.outcome.isSuccess == true)
        stuck.open()
        await returned.wait()
        #expect(sawCancellation.all == [true])
    }

    /// Removing a running task with a timeout abandons it at once: the run does not wait for
    /// its body.
    @Test func removingARunningTimedTaskAbandonsIt() async throws {
        let clock = ManualClock()
        let started = Latch()
        let never = Latch()
        var graph = TaskGraph()
        graph.add("timed", options: TaskOptions(timeout: .seconds(60), failure: .optional)) { _ in
            started.open()
            await never.wait()
        }
        let run = try graph.start(clock: clock)
        await started.wait()
        #expect(try run.remove("timed") == .abandoned)
        let report = try await run.report()
        #expect("\(report["timed"]!.outcome)" == "cancelled")
        #expect(report["timed"]?.wasRemoved == true)
        never.open()
    }

    /// Cancelling a run lets a timed body go at once, even one that ignores cancellation.
    @Test func cancellingARunLetsATimedBodyGo() async throws {
        let clock = ManualClock()
        let started = Latch()
        let never = Latch()
        var graph = TaskGraph()
        graph.add("timed", options: TaskOptions(timeout: .seconds(60))) { _ in
            started.open()
            await never.wait()
        }
        let run = try graph.start(clock: clock)
        await started.wait()
        run.cancel()
        let report = try await run.report()
        #expect(report.outcome == .cancelled)
        #expect("\(report["timed"]!.outcome)" == "cancelled")
        never.open()
    }

    /// The run's timer ends with the run: once the report is in, no sleeper is left on the
    /// clock for a deadline that never came.
    @Test func theTimerEndsWithTheRun() async throws {
        let clock = ManualClock()
        var graph = TaskGraph()
        for index in 0..<20 { graph.add("t\(index)", options: TaskOptions(timeout: .seconds(60))) { _ in } }
        let report = try await graph.start(clock: clock).report()
        #expect(report.outcome == .completed)
        for _ in 0..<10_000 where clock.sleeperCount > 0 { await Task.yield() }
        #expect(clock.sleeperCount == 0)
    }
}
