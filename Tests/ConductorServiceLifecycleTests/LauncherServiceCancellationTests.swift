import Conductor
import ConductorServiceLifecycle
import ConductorTestKit
import Logging
import ServiceLifecycleTestKit
import Testing

/// A service run from a task cancelled already launches nothing. The hook holds `run()`'s
/// caller right after the launch's driver started, until the launch has ended: a launch started
/// before any cancellation handler was in place would run its tasks meanwhile.
@Suite(.timeLimit(.minutes(1))) struct LauncherServiceCancellationTests {
    @Test func aServiceRunFromACancelledTaskBeginsNoTask() async throws {
        let began = Recorder<String>()
        let launcher = Launcher()
        try launcher.add(ClosureStartupTask("config") { began.append("config") })
        try launcher.add(ClosureStartupTask("pool") { began.append("pool") })
        let service = LauncherService(launcher, logger: .quiet)
        try await TaskGraph.$holdsCallerAfterStartingDriver.withValue(true) {
            // `Task {}` copies the task-local values bound here, the hook among them.
            try await Task {
                withUnsafeCurrentTask { $0?.cancel() }
                try await service.run()
            }.value
        }
        #expect(began.all.isEmpty, "tasks began: \(began.all)")
        #expect(try await launcher.report().outcome == .cancelled)
        // A cancelled launch answers `false` at the caller's graceful shutdown.
        let answer = await testGracefulShutdown { trigger -> Bool? in
            trigger.triggerGracefulShutdown()
            do { return try await service.launched() } catch { return nil }
        }
        #expect(answer == false, "the launch was cancelled")
    }
}
