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
            guard try await startup.launched() else {
                events.append("server never served")
                return
            }
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
        let report = try await startup.launcher.report()
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
        #expect(try await startup.launched())

        await group.triggerGracefulShutdown()
        let error = await #expect(throws: LaunchError.self) { try await running.value }
        #expect(error?.code == .undoFailed)
        #expect(error?.message == "shutdown of 'server': undo of 'pool' failed: refused")
        // The undo's own error, as a value: the one failure, and the group's error's cause.
        #expect(error?.undoFailures.map(\.task) == ["pool"])
        #expect(error?.undoFailures.first?.outcome.error is Refused)
        #expect(error?.underlyingError is Refused)
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
        #expect(try await startup.launched())

        await group.triggerGracefulShutdown()
        // cache's undo had a deadline too: wait for pool's, which is armed only once cache's
        // undo has ended and its deadline been cancelled.
        await poolUndoStarted.wait()
        await clock.sleepers(atLeast: 1, for: .launchUndoTimeout)
        #expect(events.all == ["undo cache"])
        clock.advance(by: .seconds(5))
        let error = await #expect(throws: LaunchError.self) { try await running.value }
        #expect(error?.message == "shutdown of 'server': undo of 'pool' timed out after 5.00 s")
        #expect(events.all == ["undo cache", "undo config"])
        never.open()
    }

    /// A graceful shutdown while the launch still runs cancels it, undoes what had succeeded
    /// (config), and is not a failure.
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
        #expect((try await launcher.report()).outcome == .cancelled)
        never.open()
    }

    /// The article's shape, `[LauncherService, server]`, and a graceful shutdown while a
    /// start-up task still has 8 s to go (on a clock the test never moves): the server, which
    /// the group shuts down first, hears it in `launched()`, which cancels the launch and
    /// answers `false`; the server never serves; then the launcher undoes config, and the
    /// group's `run()` returns without error — without the 8 s.
    @Test func gracefulShutdownDuringTheLaunchStopsTheWaitingServerAndTheGroupAtOnce() async throws {
        let clock = ManualClock()
        let events = Recorder<String>()
        let poolStarted = Latch()
        let launcher = Launcher("server", clock: clock)
        try launcher.add(ClosureStartupTask("config", run: {}, undo: { events.append("undo config") }))
        try launcher.add(
            ClosureStartupTask(
                "pool",
                run: {
                    poolStarted.open()
                    try await clock.sleep(for: .seconds(8))
                }, undo: { events.append("undo pool") }))
        let startup = LauncherService(launcher, logger: logger)
        let server = Server(startup: startup, events: events)
        let group = ServiceGroup(services: [startup, server], logger: logger)
        let running = Task { try await group.run() }
        await poolStarted.wait()

        await group.triggerGracefulShutdown()
        try await running.value
        #expect(events.all == ["server never served", "undo config"])
        #expect(!server.serving.isOpen)
        let report = try await launcher.report()
        #expect(report.outcome == .cancelled)
        #expect(report.shutdown?.undos.map(\.task) == ["config"])
    }

    /// A service that calls `launched()` once it is shutting down gracefully hears `false`
    /// even though the launch completed: it is not to start now.
    @Test func aServiceShuttingDownIsNotToStartEvenAfterACompletedLaunch() async throws {
        let startup = LauncherService(try makeLauncher(Recorder<String>()), logger: logger)
        let running = Task { try await startup.run() }
        #expect(try await startup.launched())
        await testGracefulShutdown { trigger in
            trigger.triggerGracefulShutdown()
            let answer = try? await startup.launched()
            #expect(answer == false)
        }
        running.cancel()
        try await running.value
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
        let heard = await #expect(throws: LaunchError.self) { _ = try await startup.launched() }
        #expect(heard?.code == .taskFailed)
    }

    /// Issue #34: a `ServiceGroup` rethrows the service's error as it was thrown, so the
    /// caller of `group.run()` reaches what the failed task threw through
    /// `LaunchError.underlyingError` and matches it by type.
    @Test func theGroupsErrorCarriesTheFailedTasksOwnError() async throws {
        struct ConfigMissing: Error, Equatable { var key: String }
        let launcher = Launcher("server")
        try launcher.add(ClosureStartupTask("config", run: { throw ConfigMissing(key: "DATABASE_URL") }))
        let group = ServiceGroup(services: [LauncherService(launcher, logger: logger)], logger: logger)
        do {
            try await group.run()
            Issue.record("the group should have ended with the launch's error")
        } catch {
            let launchError = try #require(error as? LaunchError)
            #expect(launchError.code == .taskFailed)
            #expect(launchError.underlyingError as? ConfigMissing == ConfigMissing(key: "DATABASE_URL"))
        }
    }

    /// A group cancelled during its graceful shutdown (as `maximumGracefulShutdownDuration` or a
    /// cancellation signal does) while undos hang, with an `undoTimeout` of 30 s on a clock the
    /// test never moves: the cancel reaches the running undos at once — pool's hears it, cache's
    /// ignores it and is abandoned — config's is not called, and the group ends without error.
    /// The report and the log name the undos it cut short.
    @Test func aCancelledGroupCutsHangingUndosShortAtOnce() async throws {
        let clock = ManualClock()
        let configCalls = Recorder<Bool>()
        let cacheUndoEnded = Latch()
        let poolUndoStarted = Latch()
        let cacheUndoStarted = Latch()
        let poolHeardTheCancel = Latch()
        let never = Latch()
        let launcher = Launcher("server", clock: clock, undoTimeout: .seconds(30))
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
        let log = CapturingLogHandler()
        let startup = LauncherService(launcher, logger: Logger(label: "test") { _ in log })
        let server = Server(startup: startup, events: Recorder())
        let group = ServiceGroup(services: [startup, server], logger: logger)
        let running = Task { try await group.run() }
        await server.serving.wait()

        await group.triggerGracefulShutdown()
        await poolUndoStarted.wait()
        await cacheUndoStarted.wait()
        running.cancel()
        try await running.value
        await poolHeardTheCancel.wait()
        let shutdown = try #require(try await launcher.report().shutdown)
        #expect(Set(shutdown.undos.map(\.task)) == ["pool", "cache", "config"])
        #expect(shutdown.undos.allSatisfy { "\($0.outcome)" == "cut short: the shutdown was cancelled" })
        let line = try #require(log.lines.all.last)
        #expect(line.level == .warning)
        #expect(line.message == "shutdown cut short by cancellation")
        guard case .array(let cutShort) = line.metadata["cutShort"] else {
            Issue.record("the line should name the undos it cut short")
            return
        }
        #expect(Set(cutShort.map { "\($0)" }) == ["pool", "cache", "config"])
        never.open()
        await cacheUndoEnded.wait()
        #expect(configCalls.all.isEmpty, "config's undo was called")
    }

    // MARK: - Names

    /// A group logs and reports a service by its description: each launcher by its name, so
    /// two can be told apart; a gate by the name it was given.
    @Test func theGroupCallsEachLauncherByItsName() async throws {
        let first = LauncherService(Launcher("database"))
        let second = LauncherService(Launcher("caches"))
        #expect("\(first)" == "LauncherService(database)")
        #expect("\(second)" == "LauncherService(caches)")
        let gate = try RequestGate<String>(
            transport: ServersArticleExampleTests.AnsweringTransport(), credential: "token",
            authorize: { _, _ in }, refresh: { _ in "token" })
        #expect("\(RequestGateService(gate, name: "payments"))" == "RequestGateService(payments)")
        #expect("\(RequestGateService(gate))" == "RequestGateService")

        let log = CapturingLogHandler()
        let group = ServiceGroup(
            services: [first, second], logger: Logger(label: "test") { _ in log })
        let running = Task { try await group.run() }
        #expect(try await first.launched())
        #expect(try await second.launched())
        await group.triggerGracefulShutdown()
        try await running.value
        let named = Set(log.lines.all.compactMap { $0.metadata["sl-service"].map { "\($0)" } })
        #expect(named.isSuperset(of: ["LauncherService(database)", "LauncherService(caches)"]))
    }

    // MARK: - With the test kit's trigger

    /// The service alone, driven by `testGracefulShutdown`: nothing is undone until the
    /// trigger, everything after it.
    @Test func theTestKitsTriggerRunsTheShutdown() async throws {
        let events = Recorder<String>()
        let startup = LauncherService(try makeLauncher(events))
        try await testGracefulShutdown { trigger in
            let running = Task { try await startup.run() }
            #expect(try await startup.launched())
            #expect(events.all.isEmpty)
            trigger.triggerGracefulShutdown()
            try await running.value
        }
        #expect(events.all == ["undo cache", "undo pool", "undo config"])
    }
}
