import Conductor
import ConductorTestKit

/// A start-up task made of a closure, for tests.
struct TestStartupTask: StartupTask {
    let name: String
    var dependencies: TaskDependencies
    var options: TaskOptions
    let body: @Sendable () async throws -> Void

    init(
        _ name: String,
        dependencies: TaskDependencies = .inOrderOfAddition,
        options: TaskOptions = TaskOptions(),
        _ body: @escaping @Sendable () async throws -> Void = {}
    ) {
        self.name = name
        self.dependencies = dependencies
        self.options = options
        self.body = body
    }

    func run() async throws { try await body() }
}

/// A task that must run on the main actor, and checks that it does.
struct MainActorStartupTask: StartupTask {
    let name: String
    let ran: Recorder<String>
    var runsOnMainActor: Bool { true }

    @MainActor func run() async throws {
        MainActor.assertIsolated()
        ran.append(name)
    }
}

/// The seed's delegate: records what it heard, in order, and opens a latch at the end.
struct RecordingObserver: LaunchObserver {
    let heard = Recorder<String>()
    let finished = Latch()

    func taskStarted(_ name: String) { heard.append("started \(name)") }
    func taskCompleted(_ name: String) { heard.append("completed \(name)") }
    func taskFailed(_ name: String, error: any Error) { heard.append("failed \(name): \(error)") }
    func taskCancelled(_ name: String) { heard.append("cancelled \(name)") }
    func readinessReached(_ name: String) { heard.append("ready \(name)") }
    func launchFinished(_ outcome: RunOutcome) {
        heard.append("finished \(outcome)")
        finished.open()
    }
}

extension Launcher {
    /// Waits for the first event (from the start of the launch) that matches.
    @discardableResult
    func event(where predicate: (GraphEvent) -> Bool) async -> GraphEvent? {
        for await event in events where predicate(event) { return event }
        return nil
    }
}
