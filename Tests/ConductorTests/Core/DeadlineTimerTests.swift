import ConductorTestKit
import Synchronization
import Testing

@testable import ConductorAssembly
@testable import ConductorCore
@testable import ConductorGate
@testable import ConductorGraph
@testable import ConductorHarmonizer
@testable import ConductorLaunch
@testable import ConductorReports

/// The timer on a `ManualClock`: one sleeping task per owner, however many deadlines; nothing
/// sleeps for real. Firings are awaited as events, time is moved only once the timer sleeps.
@Suite(.timeLimit(.minutes(1)))
struct DeadlineTimerTests {
    // MARK: - Firing

    /// Deadlines scheduled from many tasks share one sleeper and each fires once, at its time.
    @Test func manyDeadlinesShareOneSleeperAndFireInOrder() async throws {
        let clock = ManualClock()
        let timer = DeadlineTimer(clock: ClockSource(clock))
        let fired = Recorder<(index: Int, at: Duration)>()
        let deadlines = (0..<64).map { Duration.milliseconds(($0 * 7919) % 5_000 + 1) }
        await withTaskGroup(of: Void.self) { group in
            for (index, deadline) in deadlines.enumerated() {
                group.addTask {
                    timer.schedule(at: deadline) {
                        fired.append((index, clock.now.offset))
                        clock.stateChanged()
                    }
                }
            }
        }
        #expect(timer.pendingCount == 64)
        var mostSleepers = 0
        let done = try await clock.advance(by: .milliseconds(100)) {
            mostSleepers = max(mostSleepers, clock.sleeperCount)
            return fired.all.count == 64
        }
        #expect(done)
        #expect(mostSleepers == 1, "one timer task, not one per deadline")
        let all = fired.all
        #expect(Set(all.map(\.index)).count == 64, "each deadline fired once")
        for (index, at) in all {
            #expect(at >= deadlines[index] && at < deadlines[index] + .milliseconds(100))
        }
        #expect(all.map { deadlines[$0.index] } == all.map { deadlines[$0.index] }.sorted())
        #expect(!timer.hasTimer, "the timer task ends once nothing is pending")
        #expect(clock.sleeperCount == 0)
    }

    /// A deadline earlier than the one the timer sleeps for wakes it in time.
    @Test func anEarlierDeadlineWakesTheSleepingTimer() async throws {
        let clock = ManualClock()
        let timer = DeadlineTimer(clock: ClockSource(clock))
        let (firings, fire) = AsyncStream.makeStream(of: String.self)
        var next = firings.makeAsyncIterator()
        timer.schedule(at: .seconds(10)) { fire.yield("late") }
        await clock.sleepers(atLeast: 1)
        timer.schedule(at: .seconds(1)) { fire.yield("early") }
        #expect(clock.sleeperCount <= 1, "the timer sleeping until 10 s was replaced, not joined")
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(1))
        #expect(await next.next() == "early")
        await clock.sleepers(atLeast: 1)
        #expect(clock.sleeperCount == 1)
        clock.advance(by: .seconds(9))
        #expect(await next.next() == "late")
    }

    @Test func aDeadlineAlreadyPastFiresAtOnce() async {
        let clock = ManualClock()
        clock.advance(by: .seconds(5))
        let timer = DeadlineTimer(clock: ClockSource(clock))
        let (firings, fire) = AsyncStream.makeStream(of: String.self)
        var next = firings.makeAsyncIterator()
        timer.schedule(after: .zero) { fire.yield("zero") }
        #expect(await next.next() == "zero")
    }

    /// A callback may schedule on the timer that runs it; a deadline already due fires in
    /// the same wake.
    @Test func aCallbackMayScheduleMore() async {
        let clock = ManualClock()
        let timer = DeadlineTimer(clock: ClockSource(clock))
        let (firings, fire) = AsyncStream.makeStream(of: String.self)
        var next = firings.makeAsyncIterator()
        timer.schedule(at: .seconds(1)) {
            fire.yield("first")
            timer.schedule(at: .zero) { fire.yield("from the callback") }
        }
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(1))
        #expect(await next.next() == "first")
        #expect(await next.next() == "from the callback")
    }

    // MARK: - Cancelling

    @Test func cancellingTheLastDeadlineEndsTheTimerTask() async {
        let clock = ManualClock()
        let timer = DeadlineTimer(clock: ClockSource(clock))
        let token = timer.schedule(at: .seconds(1)) { Issue.record("a cancelled deadline fired") }
        await clock.sleepers(atLeast: 1)
        #expect(timer.cancel(token))
        #expect(clock.sleeperCount == 0, "its sleep is cancelled at once")
        #expect(!timer.hasTimer)
        #expect(!timer.cancel(token), "twice is a no-op")
        clock.advance(by: .seconds(5))
    }

    @Test func cancelAllEndsTheTimerTask() async {
        let clock = ManualClock()
        let timer = DeadlineTimer(clock: ClockSource(clock))
        for second in 1...3 { timer.schedule(at: .seconds(second)) { Issue.record("fired after cancelAll") } }
        await clock.sleepers(atLeast: 1)
        timer.cancelAll()
        #expect(clock.sleeperCount == 0)
        #expect(timer.pendingCount == 0)
        clock.advance(by: .seconds(5))
    }

    /// Schedules and cancels from many tasks while time runs: a deadline whose cancel returned
    /// `true` never fires; every other one fires exactly once.
    @Test func concurrentScheduleCancelAndFire() async throws {
        let clock = ManualClock()
        let timer = DeadlineTimer(clock: ClockSource(clock))
        let fired = Recorder<Int>()
        let cancelled = Recorder<Int>()
        let finished = Recorder<Int>()
        let tasks = 4
        let perTask = 100
        for task in 0..<tasks {
            Task {
                var generator = SeededGenerator(seed: UInt64(task))
                for index in task * perTask..<(task + 1) * perTask {
                    let at = clock.now.offset + .milliseconds(Int.random(in: 0..<300, using: &generator))
                    let token = timer.schedule(at: at) {
                        fired.append(index)
                        clock.stateChanged()
                    }
                    if Bool.random(using: &generator), timer.cancel(token) {
                        cancelled.append(index)
                    }
                    if index % 10 == 0 { await Task.yield() }
                }
                finished.append(task)
                clock.stateChanged()
            }
        }
        let done = try await clock.advance(by: .milliseconds(20)) {
            finished.all.count == tasks && fired.all.count + cancelled.all.count == tasks * perTask
        }
        #expect(done)
        let firedOnes = fired.all
        #expect(Set(firedOnes).count == firedOnes.count, "nothing fires twice")
        #expect(Set(firedOnes).isDisjoint(with: cancelled.all), "a cancelled deadline never fires")
        #expect(timer.pendingCount == 0)
    }

    // MARK: - A clock whose sleep fails

    /// The timer's sleep throws on its own: no deadline fires early or twice, and the next
    /// schedule starts a timer that serves the deadlines left waiting.
    @Test func aFailingSleepLeavesItsDeadlinesToTheNextTimer() async throws {
        let manual = ManualClock()
        let fail = Latch()
        let timer = DeadlineTimer(clock: ClockSource(FailingOnceClock(manual, failWhen: fail)))
        let (firings, fire) = AsyncStream.makeStream(of: String.self)
        var next = firings.makeAsyncIterator()
        timer.schedule(at: .seconds(1)) { fire.yield("a") }
        let failing = try #require(timer.timerTask, "attached before schedule returns")
        fail.open()
        await failing.value
        #expect(!timer.hasTimer)
        #expect(timer.pendingCount == 1)
        timer.schedule(at: .seconds(2)) { fire.yield("b") }
        await manual.sleepers(atLeast: 1)
        manual.advance(by: .seconds(1))
        #expect(await next.next() == "a")
        await manual.sleepers(atLeast: 1)
        manual.advance(by: .seconds(1))
        #expect(await next.next() == "b")
    }

    // MARK: - race

    /// Work that ignores cancellation until `latch` opens.
    private static func stuck(_ latch: Latch) async -> String {
        await latch.wait()
        return "work"
    }

    @Test func raceReturnsTheWorkWhenItFinishesFirst() async {
        let clock = ManualClock()
        let timer = DeadlineTimer(clock: ClockSource(clock))
        let value = await timer.race({ "work" }, until: .seconds(1), onDeadline: { "deadline" })
        #expect(value == "work")
        #expect(timer.pendingCount == 0)
        #expect(!timer.hasTimer)
    }

    /// The deadline ends the wait even though the work ignores cancellation.
    @Test func raceReturnsAtTheDeadlineWithoutWaitingForTheWork() async {
        let clock = ManualClock()
        let timer = DeadlineTimer(clock: ClockSource(clock))
        let never = Latch()
        let racing = Task {
            await timer.race({ await Self.stuck(never) }, until: .seconds(1), onDeadline: { "deadline" })
        }
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(1))
        #expect(await racing.value == "deadline")
        never.open()
    }

    @Test func raceEndsWhenTheCallerIsCancelled() async {
        let clock = ManualClock()
        let timer = DeadlineTimer(clock: ClockSource(clock))
        let never = Latch()
        let racing = Task {
            await timer.race(
                { await Self.stuck(never) },
                until: .seconds(1),
                onDeadline: { "deadline" },
                onCancel: { "cancelled" }
            )
        }
        await clock.sleepers(atLeast: 1)
        racing.cancel()
        #expect(await racing.value == "cancelled")
        #expect(clock.sleeperCount == 0, "the deadline was cancelled with it")
        never.open()
    }

    /// Without `onCancel`, cancelling the caller changes nothing: the race ends at the deadline.
    @Test func raceWithoutOnCancelIgnoresTheCallersCancellation() async {
        let clock = ManualClock()
        let timer = DeadlineTimer(clock: ClockSource(clock))
        let never = Latch()
        let racing = Task {
            await timer.race({ await Self.stuck(never) }, until: .seconds(1), onDeadline: { "deadline" })
        }
        await clock.sleepers(atLeast: 1)
        racing.cancel()
        clock.advance(by: .seconds(1))
        #expect(await racing.value == "deadline")
        never.open()
    }
}

/// A `ManualClock` whose first sleep throws a failure of its own (not a cancellation) once
/// the test opens `failWhen`.
private final class FailingOnceClock: Clock {
    struct Failure: Error {}

    let base: ManualClock
    let failedOnce = Atomic(false)
    let failWhen: Latch

    init(_ base: ManualClock, failWhen: Latch) {
        self.base = base
        self.failWhen = failWhen
    }

    var now: ManualClock.Instant { base.now }
    var minimumResolution: Duration { base.minimumResolution }

    func sleep(until deadline: ManualClock.Instant, tolerance: Duration?) async throws {
        if !failedOnce.exchange(true, ordering: .acquiringAndReleasing) {
            await failWhen.wait()
            throw Failure()
        }
        try await base.sleep(until: deadline, tolerance: tolerance)
    }
}
