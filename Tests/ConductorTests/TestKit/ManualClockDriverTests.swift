import Conductor
import ConductorTestKit
import Synchronization
import Testing

/// `ManualClock.advance(by:until:maxSteps:)`: the one way tests let time run through a
/// scenario. It must suspend between steps (a polling driver starved a 2-thread pool and hung
/// the TSan suite), stop when its condition holds, give up after its step budget, and end
/// when its task is cancelled.
@Suite(.timeLimit(.minutes(1)))
struct ManualClockDriverTests {
    @Test func drivesAScenarioToItsEndAndStops() async throws {
        let clock = ManualClock()
        let ticks = Atomic(0)
        let worker = Task {
            for _ in 0..<5 {
                try await clock.sleep(for: .seconds(1))
                ticks.add(1, ordering: .relaxed)
            }
            clock.stateChanged()
        }
        let done = try await clock.advance(by: .seconds(1), until: { ticks.load(ordering: .relaxed) == 5 })
        #expect(done)
        // The worker slept before each step and nothing else slept, so no step was wasted:
        // time moved exactly as far as the scenario needed.
        #expect(clock.now == .init(offset: .seconds(5)))
        try await worker.value
    }

    @Test func givesUpAfterItsStepBudget() async throws {
        let clock = ManualClock()
        let sleeper = Task { try await clock.sleep(for: .seconds(100)) }
        await clock.sleepers(atLeast: 1)
        let done = try await clock.advance(by: .seconds(1), until: { false }, maxSteps: 3)
        #expect(!done)
        #expect(clock.now == .init(offset: .seconds(3)))
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
    }

    /// With nobody asleep, the driver waits for a sleeper or `stateChanged()` instead of
    /// moving time; a cancelled driver throws instead of waiting on.
    @Test func waitsForWorkWhenNobodySleepsAndEndsWhenCancelled() async throws {
        let clock = ManualClock()
        let driver = Task { try await clock.advance(by: .seconds(1), until: { false }) }
        clock.stateChanged()  // one step for the change, then it waits again
        driver.cancel()
        await #expect(throws: CancellationError.self) { try await driver.value }
        #expect(clock.now <= .init(offset: .seconds(1)))
    }

    /// Regression: the loop this driver replaced advanced again as soon as *any* sleeper
    /// existed, so a far-off sleeper let it race through its steps before the work it had
    /// woken ever ran. Here the woken task cannot run until the test lets it (its jobs sit on
    /// a held executor), so a driver that does not wait for it would reach 10 s.
    @Test func waitsForTheSleeperItWokeBeforeTheNextStep() async throws {
        let clock = ManualClock()
        let held = HeldTaskExecutor()
        let farAway = Task { try await clock.sleep(for: .seconds(3600)) }
        let woken = Task(executorPreference: held) { try await clock.sleep(for: .seconds(1)) }
        await held.jobs(atLeast: 1)
        held.runAll()  // the task starts, and falls asleep
        await clock.sleepers(atLeast: 2)
        let driver = Task { try await clock.advance(by: .seconds(1), until: { false }, maxSteps: 10) }
        await held.jobs(atLeast: 1)  // the first step woke it; its resumption waits in `held`
        #expect(clock.now == .init(offset: .seconds(1)))
        held.runAll()
        try await woken.value
        // Now the driver may go on: only the far-away sleeper is left, and it is not due.
        #expect(try await driver.value == false)
        #expect(clock.now == .init(offset: .seconds(10)))
        farAway.cancel()
        _ = try? await farAway.value
    }
}

/// A task executor whose jobs wait until the test runs them.
private final class HeldTaskExecutor: TaskExecutor, Sendable {
    private let state = Lock<(jobs: [UnownedJob], waiters: [(Int, CheckedContinuation<Void, Never>)])>(([], []))

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.jobs.append(job)
            let count = state.jobs.count
            let ready = state.waiters.filter { $0.0 <= count }.map(\.1)
            state.waiters.removeAll { $0.0 <= count }
            return ready
        }
        for waiter in ready { waiter.resume() }
    }

    func jobs(atLeast count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if state.jobs.count >= count { return true }
                state.waiters.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Runs the held jobs, and any they enqueue, on this thread.
    func runAll() {
        while let job = state.withLock({ $0.jobs.isEmpty ? nil : $0.jobs.removeFirst() }) {
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
