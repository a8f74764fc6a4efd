import Conductor
import ConductorServiceLifecycle
import ConductorTestKit
import Logging
import ServiceLifecycle
import ServiceLifecycleTestKit
import Testing

/// `LauncherService` under a real `ServiceGroup` and under the test kit's graceful-shutdown
/// trigger: the launch when the group starts, readiness to whoever waits, the launcher's
/// shutdown (undos in reverse dependency order) on graceful shutdown.
@Suite(.timeLimit(.minutes(1))) struct LauncherServiceTests {
    private let logger = Logger.quiet

    /// A server that starts once the launch has completed and stops on graceful shutdown.
    private struct Server: Service {
        let startup: LauncherService
        let events: Recorder<String>
        let serving = Latch()

        func run() async throws {
            try await startup.launched()
            events.append("serving")
            serving.open()
            try? await gracefulShutdown()
            events.append("server stopped")
        }
    }

    /// A launcher whose tasks record their undos in `events`: config, then pool (chained), then
    /// cache, which depends on pool.
    private func makeLauncher(
        _ events: Recorder<String>, clock: some Clock<Duration> = ContinuousClock(),
        poolUndo: @escaping @Sendable () async throws -> Void = {}
    ) throws -> Launcher {
        let launcher = Launcher("server", clock: clock, undoTimeout: .seconds(5))
        try launcher.add(ClosureStartupTask("config", run: {}, undo: { events.append("undo config") }))
        try launcher.add(
            ClosureStartupTask(
                "pool", run: {},
                undo: {
                    try await poolUndo()
                    events.append("undo pool")
                }))
        try launcher.add(
            ClosureStartupTask("cache", dependsOn: ["pool"], run: {}, undo: { events.append("undo cache") }))
        return launcher
    }

    // MARK: - In a ServiceGroup

    /// The server waits for the launch; on graceful shutdown the group stops the server first
    /// (services shut down in the reverse of the order given), then the launcher undoes its
    /// tasks, dependents first.
    @Test func theGroupLaunchesServesThenUndoesInReverseOrder() async throws {
        let events = Recorder<String>()
        let startup = LauncherService(try makeLauncher(events), logger: logger)
        let server = Server(startup: startup, events: events)
        let group = ServiceGroup(services: [startup, server], logger: logger)
        let running = Task { try await group.run() }
        await server.serving.wait()
        #expect(events.all == ["serving"])

        await group.triggerGracefulShutdown()
        try await running.value
        #expect(events.all == ["serving", "server stopped", "undo cache", "undo pool", "undo config"])
        let report = await startup.launcher.report()
        #expect(report.outcome == .completed)
        #expect(report.shutdown?.isSuccess == true)
    }

    /// pool's undo throws: config is still undone, and the group ends with an error naming
    /// the undo.
    @Test func aFailingUndoEndsTheGroupWithAnErrorNamingIt() async throws {
        let events = Recorder<String>()
        let startup = LauncherService(try makeLauncher(events, poolUndo: { throw Refused() }), logger: logger)
        let group = ServiceGroup(services: [startup], logger: logger)
        let running = Task { try await group.run() }
        try await startup.launched()

        await group.triggerGracefulShutdown()
        let error = await #expect(throws: LaunchError.self) { try await running.value }
        #expect(error?.code == .undoFailed)
        #expect(error?.message == "shutdown of 'server': undo of 'pool' failed: refused")
        #expect(events.all == ["undo cache", "undo config"])
    }

    /// pool's undo hangs: at its deadline on the launcher's clock it is abandoned, config is
    /// undone, and the group ends with an error naming it.
    @Test func aHangingUndoHitsItsDeadline() async throws {
        let clock = ManualClock()
        let events = Recorder<String>()
        let poolUndoStarted = Latch()
        let never = Latch()
        let startup = LauncherService(
            try makeLauncher(
                events, clock: clock,
                poolUndo: {
                    poolUndoStarted.open()
                    await never.wait()
                }), logger: logger)
        let group = ServiceGroup(services: [startup], logger: logger)
        let running = Task { try await group.run() }
        try await startup.launched()

        await group.triggerGracefulShutdown()
        // cache's undo had a deadline too: wait for pool's, which is armed only once cache's
        // undo has ended and its deadline been cancelled.
        await poolUndoStarted.wait()
        await clock.sleepers(atLeast: 1, for: .launchUndoTimeout)
        #expect(events.all == ["undo cache"])
        clock.advance(by: .seconds(5))
        let error = await #expect(throws: LaunchError.self) { try await running.value }
        #expect(error?.message == "shutdown of 'server': undo of 'pool' timed out after 5.0 seconds")
        #expect(events.all == ["undo cache", "undo config"])
        never.open()
    }

    /// A graceful shutdown while the launch still runs cancels it, undoes what had succeeded
    /// (config), and is not a failure; whoever waited for the launch hears it was cancelled.
    @Test func gracefulShutdownDuringTheLaunchCancelsItAndUndoesWhatSucceeded() async throws {
        let events = Recorder<String>()
        let poolStarted = Latch()
        let never = Latch()
        let launcher = Launcher("server")
        try launcher.add(ClosureStartupTask("config", run: {}, undo: { events.append("undo config") }))
        try launcher.add(
            ClosureStartupTask(
                "pool",
                run: {
                    poolStarted.open()
                    await never.wait()
                }, undo: { events.append("undo pool") }))
        let startup = LauncherService(launcher, logger: logger)
        let group = ServiceGroup(services: [startup], logger: logger)
        let running = Task { try await group.run() }
        await poolStarted.wait()

        await group.triggerGracefulShutdown()
        try await running.value
        #expect(events.all == ["undo config"])
        let error = await #expect(throws: LaunchError.self) { try await startup.launched() }
        #expect(error?.code == .cancelled)
        #expect((await launcher.report()).outcome == .cancelled)
        never.open()
    }

    /// A required task's failure ends the service with the launch's error, after undoing what
    /// had succeeded; the server waiting for the launch hears the same error, and the group
    /// ends with it.
    @Test func aFailedLaunchUndoesWhatSucceededAndEndsTheGroup() async throws {
        let events = Recorder<String>()
        let launcher = Launcher("server")
        try launcher.add(ClosureStartupTask("config", run: {}, undo: { events.append("undo config") }))
        try launcher.add(ClosureStartupTask("pool", run: { throw Refused() }, undo: { events.append("undo pool") }))
        let startup = LauncherService(launcher, logger: logger)
        let server = Server(startup: startup, events: events)
        let group = ServiceGroup(services: [startup, server], logger: logger)

        let error = await #expect(throws: LaunchError.self) { try await group.run() }
        #expect(error?.code == .taskFailed)
        #expect(error?.taskName == "pool")
        #expect(events.all == ["undo config"])
        let heard = await #expect(throws: LaunchError.self) { try await startup.launched() }
        #expect(heard?.code == .taskFailed)
    }

    // MARK: - With the test kit's trigger

    /// The service alone, driven by `testGracefulShutdown`: nothing is undone until the
    /// trigger, everything after it.
    @Test func theTestKitsTriggerRunsTheShutdown() async throws {
        let events = Recorder<String>()
        let startup = LauncherService(try makeLauncher(events))
        try await testGracefulShutdown { trigger in
            let running = Task { try await startup.run() }
            try await startup.launched()
            #expect(events.all.isEmpty)
            trigger.triggerGracefulShutdown()
            try await running.value
        }
        #expect(events.all == ["undo cache", "undo pool", "undo config"])
    }
}
