import Conductor
import ConductorTestKit
import Testing

/// The test kit's tools for users' own tests: each is shown doing its one job, and each test
/// fails if the tool returns early, late or never.
@Suite(.timeLimit(.minutes(1)))
struct TestKitTests {
    private final class Widget: Sendable {}
    private struct Flaky: Error {}

    // MARK: - Latch

    @Test func latchHoldsWaitersUntilOpenedAndLetsLaterWaitsThrough() async {
        let latch = ConductorTestKit.Latch()
        let clock = ManualClock()
        let waiter = Task {
            await latch.wait()
            // Sleeping only after the latch opened: the test can see when the wait ended.
            try? await clock.sleep(for: .seconds(1))
        }
        #expect(!latch.isOpen)
        latch.open()
        await clock.sleepers(atLeast: 1)  // the waiter got past the latch
        #expect(latch.isOpen)
        await latch.wait()  // open: returns at once
        clock.advance(by: .seconds(1))
        await waiter.value
    }

    @Test func cancellableWaitEndsWhenItsTaskIsCancelled() async {
        let latch = ConductorTestKit.Latch()
        let waiter = Task { await latch.waitCancellable() }
        waiter.cancel()
        #expect(await waiter.value == false)
        latch.open()
        #expect(await latch.waitCancellable())
    }

    // MARK: - EventRecorder

    @Test func recorderWaitsForAMatchingEventAndRecordsTheWholeRun() async throws {
        let release = ConductorTestKit.Latch()
        var graph = TaskGraph()
        graph.add("slow") { _ in await release.wait() }
        graph.add("after", dependsOn: ["slow"]) { _ in }
        let run = try graph.start()
        let recorder = EventRecorder(run.events)

        let started = await recorder.first {
            if case .taskStarted("slow", _, _) = $0 { true } else { false }
        }
        #expect(started != nil)
        // "after" cannot have started while "slow" is held.
        #expect(!recorder.events.contains { if case .taskStarted("after", _, _) = $0 { true } else { false } })
        release.open()

        let all = await recorder.finished()
        #expect(recorder.isFinished)
        #expect(all.contains { if case .taskSucceeded("after", _) = $0 { true } else { false } })
        #expect(await recorder.first { _ in false } == nil)  // ended: no match, no hang
        #expect(try await run.report().outcome == .completed)
    }

    // MARK: - Equatable outcomes

    @Test func outcomesCompareWithEqualsAndKinds() async throws {
        let clock = ManualClock()
        var graph = TaskGraph()
        graph.add("broken", options: TaskOptions(failure: .optional)) { _ in throw Flaky() }
        graph.add("needsBroken", dependsOn: ["broken"], options: TaskOptions(failure: .optional)) { _ in }
        graph.add("fine") { _ in }
        let report = try await graph.start(clock: clock).report()
        #expect(report.outcome == .completed)
        #expect(report.outcome != .cancelled)
        #expect(report["broken"]?.outcome.kind == .failed)
        #expect(report["needsBroken"]?.outcome.kind == .skipped(dependency: "broken"))
        #expect(report["fine"]?.outcome.kind == .succeeded)

        let harmonizer = try Harmonizer(participants: ["avatar", "feed"], timeout: .seconds(2), clock: clock)
        #expect(harmonizer.leave("avatar"))
        await clock.sleepers(atLeast: 1, for: .harmonizerTimeout)
        clock.advance(by: .seconds(2))
        #expect(await harmonizer.outcome.kind == .timedOut(missing: ["feed"]))
        #expect(await harmonizer.outcome.kind != .completed)
    }

    // MARK: - AssemblyProbe

    @Test func probeTellsWhenEveryResolverJoinedTheCreationInFlight() async throws {
        let probe = AssemblyProbe()
        let release = ConductorTestKit.Latch()
        probe.assembly.register(Widget.self) { _ in
            await release.wait()
            return Widget()
        }
        let resolvers = (0..<3).map { _ in Task { try await probe.assembly.resolve(Widget.self) } }
        await probe.waiters(atLeast: 3)
        #expect(probe.waitCount == 3)
        release.open()
        var identities = Set<ObjectIdentifier>()
        for resolver in resolvers { identities.insert(ObjectIdentifier(try await resolver.value)) }
        #expect(identities.count == 1)
    }

    // MARK: - ManualExecutor

    private actor Counter {
        let executor: ManualExecutor
        nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
        var value = 0
        init(executor: ManualExecutor) { self.executor = executor }
        func increment() { value += 1 }
    }

    @Test func executorWaitTellsWhenACallIsEnqueuedAndRunsItOnDemand() async {
        let executor = ManualExecutor()
        let counter = Counter(executor: executor)
        let call = Task { await counter.increment() }
        await executor.jobs(atLeast: 1)
        #expect(executor.pendingJobs >= 1)
        #expect(executor.runAll() >= 1)
        await call.value
        await executor.jobs(atLeast: 0)  // met: returns at once
        let read = Task { await counter.value }
        await executor.jobs(atLeast: 1)
        executor.runAll()
        #expect(await read.value == 1)
    }

    // MARK: - Gate queue

    @Test func schedulerWaitTellsWhenSubmissionsAreQueued() async throws {
        let scheduler = try PriorityScheduler(maxConcurrent: 1)
        let release = ConductorTestKit.Latch()
        let holding = ConductorTestKit.Latch()
        let holder = Task {
            try await scheduler.run {
                holding.open()
                await release.wait()
            }
        }
        // The second job is submitted only once the first holds the one slot: two tasks
        // started together may reach the scheduler in either order.
        await holding.wait()
        let queued = Task { try await scheduler.run(priority: .high) { 42 } }
        await scheduler.waitUntilQueued(atLeast: 1)
        release.open()
        try await holder.value
        #expect(try await queued.value == 42)
    }

    // MARK: - ManualClock purposes

    /// The library tags its sleeps: the test waits for a retry's backoff by name, and its own
    /// sleep is told apart from the library's.
    @Test func sleepersAreToldApartByPurpose() async throws {
        let clock = ManualClock()
        let attempts = ConductorTestKit.Latch()
        var graph = TaskGraph()
        graph.add("flaky", options: TaskOptions(timeout: .seconds(30), retry: .attempts(2, backoff: .seconds(1)))) {
            _ in
            if !attempts.isOpen {
                attempts.open()
                throw Flaky()
            }
        }
        let run = try graph.start(clock: clock)
        await clock.sleepers(atLeast: 1, for: .retryBackoff)
        #expect(clock.sleeperCount(for: .retryBackoff) == 1)
        #expect(clock.sleeperCount(for: .unspecified) == 0)
        #expect(clock.sleeperPurposes.contains(.retryBackoff))
        clock.advance(by: .seconds(1))
        #expect(try await run.report().outcome == .completed)

        // A sleep by the test itself has no purpose.
        let own = Task { try await clock.sleep(for: .seconds(5)) }
        await clock.sleepers(atLeast: 1, for: .unspecified)
        #expect(clock.sleeperPurposes == [.unspecified])
        #expect(ManualClock.SleepPurpose.unspecified.description == "unspecified")
        clock.advance(by: .seconds(5))
        try await own.value
    }
}
