import Conductor
import ConductorServiceLifecycle
import ConductorTestKit
import Logging
import ServiceLifecycle
import Testing

/// How `LauncherService` tells the services waiting in `launched()` that the launch ended other
/// than by completing: a failure only once its undos are done, a cancel only at the waiting
/// service's own graceful shutdown.
@Suite(.timeLimit(.minutes(1))) struct LauncherServiceLaunchEndTests {
    /// A server that waits for the launch and records what it heard, and whether its group was
    /// shutting it down then.
    private struct Server: Service {
        let startup: LauncherService
        let events: Recorder<String>
        var returned: Latch?

        func run() async throws {
            do {
                let served = try await startup.launched()
                events.append("server heard \(served), shutting down: \(Task.isShuttingDownGracefully)")
                returned?.open()
            } catch {
                events.append("server heard \(error.code)")
                throw error
            }
        }
    }

    /// The documented group, `[launcherService, server waiting in launched()]`, where a required
    /// task fails after config and pool succeeded: pool's undo, which waits for the test, and
    /// then config's run to their ends, uncancelled, before the server is told of the failure
    /// (hearing it, the server throws, which would cancel the group) — then the group ends with
    /// the failure.
    @Test func aFailedLaunchIsUndoneToTheEndBeforeTheWaitingServicesHearIt() async throws {
        let events = Recorder<String>()
        let poolUndoStarted = Latch()
        let release = Latch()
        let launcher = Launcher("server", undoTimeout: .seconds(60))
        try launcher.add(
            ClosureStartupTask(
                "config", run: {}, undo: { events.append("undo config, cancelled: \(Task.isCancelled)") }))
        try launcher.add(
            ClosureStartupTask(
                "pool", dependsOn: ["config"], run: {},
                undo: {
                    poolUndoStarted.open()
                    let released = await release.waitCancellable()
                    events.append(released ? "undo pool" : "undo pool cut short")
                }))
        try launcher.add(ClosureStartupTask("version", dependsOn: ["pool"]) { throw Refused() })
        let startup = LauncherService(launcher, logger: .quiet)
        let group = ServiceGroup(services: [startup, Server(startup: startup, events: events)], logger: .quiet)
        let announced: @Sendable () -> Void = { events.append("announced") }
        let running = LauncherService.$announcingLaunchEnd.withValue(announced) {
            Task { try await group.run() }
        }

        await poolUndoStarted.wait()
        release.open()
        let error = await #expect(throws: LaunchError.self) { try await running.value }
        #expect(error?.code == .taskFailed)
        // The server hears the failure after "announced" (or is cancelled by the group first,
        // if the launcher's error reached the group before it heard).
        #expect(Array(events.all.prefix(3)) == ["undo pool", "undo config, cancelled: false", "announced"])
        let shutdown = try #require(try await launcher.report().shutdown)
        #expect(shutdown.undos.map { "\($0.task): \($0.outcome)" } == ["pool: undone", "config: undone"])
    }

    /// The launch cancelled by user code, with no shutdown under way: the server waiting in
    /// `launched()` does not return — which would end the group — until the group shuts it down.
    @Test func aCancelledLaunchAnswersFalseOnlyAtTheServicesOwnShutdown() async throws {
        let events = Recorder<String>()
        let slowStarted = Latch()
        let waitingOrReturned = Latch()
        let launcher = Launcher("server")
        try launcher.add(
            ClosureStartupTask("slow") {
                slowStarted.open()
                await Latch().waitCancellable()
                try Task.checkCancellation()
            })
        let startup = LauncherService(launcher, logger: .quiet)
        let server = Server(startup: startup, events: events, returned: waitingOrReturned)
        let group = ServiceGroup(services: [startup, server], logger: .quiet)
        let waiting: @Sendable () -> Void = { waitingOrReturned.open() }
        let running = LauncherService.$waitingForGracefulShutdown.withValue(waiting) {
            Task { try await group.run() }
        }

        await slowStarted.wait()
        launcher.cancel()
        await waitingOrReturned.wait()
        #expect(events.all.isEmpty, "the server returned before its shutdown")
        await group.triggerGracefulShutdown()
        try await running.value
        #expect(events.all == ["server heard false, shutting down: true"])
        #expect(try await launcher.report().outcome == .cancelled)
    }
}
