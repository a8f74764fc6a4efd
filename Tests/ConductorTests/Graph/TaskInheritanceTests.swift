import ConductorTestKit
import Testing

@testable import ConductorAssembly
@testable import ConductorCore
@testable import ConductorGate
@testable import ConductorGraph
@testable import ConductorHarmonizer
@testable import ConductorLaunch
@testable import ConductorReports

/// What a task body inherits must not depend on which worker happens to run it: a parallel
/// worker, an inline one, a worker going straight on with the next ready task, the detached
/// task of a timed attempt, a retry, the main actor. Each body records what it sees.
@Suite struct TaskInheritanceTests {
    private enum Probe {
        @TaskLocal static var value: String?
    }

    private struct Flaky: Error {}

    private struct Sighting: Sendable, CustomStringConvertible {
        let id: String
        let attempt: Int
        let probe: String?
        let priority: TaskPriority?
        /// How many assemblies' resolution paths the body sees.
        let resolutionFrames: Int

        var description: String {
            "\(id)#\(attempt) probe=\(probe ?? "nil") priority=\(priority.map { "\($0)" } ?? "nil") frames=\(resolutionFrames)"
        }
    }

    private static func sight(_ id: String, attempt: Int, into sightings: Recorder<Sighting>) {
        sightings.append(
            Sighting(
                id: id, attempt: attempt, probe: Probe.value, priority: Task.basePriority,
                resolutionFrames: ResolutionContext.current.count))
    }

    private static let priorities: [TaskPriority] = [.high, .medium, .low, .background]

    /// For every priority: a free task, a task chained after another priority's free task (a
    /// worker goes on with it), a timed task (detached), a task that fails once and is retried,
    /// a main-actor task, and a link of a chain. More ready tasks than cores, so some workers
    /// start inline.
    private static func graph(recording sightings: Recorder<Sighting>) -> TaskGraph {
        var graph = TaskGraph()
        for (index, priority) in priorities.enumerated() {
            let name = "\(priority)"
            graph.add("free-\(name)", options: TaskOptions(priority: priority)) { context in
                sight(context.id, attempt: context.attempt, into: sightings)
            }
            let previous = "\(priorities[(index + priorities.count - 1) % priorities.count])"
            graph.add("chained-\(name)", dependsOn: ["free-\(previous)"], options: TaskOptions(priority: priority)) {
                context in
                sight(context.id, attempt: context.attempt, into: sightings)
            }
            graph.add("timed-\(name)", options: TaskOptions(priority: priority, timeout: .seconds(3600))) { context in
                sight(context.id, attempt: context.attempt, into: sightings)
            }
            graph.add("retried-\(name)", options: TaskOptions(priority: priority, retry: .attempts(2, backoff: .zero)))
            { context in
                sight(context.id, attempt: context.attempt, into: sightings)
                if context.attempt == 1 { throw Flaky() }
            }
            graph.addOnMainActor("main-\(name)", options: TaskOptions(priority: priority)) { context in
                sight(context.id, attempt: context.attempt, into: sightings)
            }
            // One chain through every priority: each link is the only task its predecessor
            // releases, so the worker that ran the predecessor goes straight on with it.
            graph.add(
                "link-\(name)", dependsOn: index == 0 ? [] : ["link-\(priorities[index - 1])"],
                options: TaskOptions(priority: priority)
            ) {
                context in
                sight(context.id, attempt: context.attempt, into: sightings)
            }
        }
        return graph
    }

    private static func expectInherited(
        _ sightings: [Sighting], bodies: Int, probe: String, frames: Int = 0,
        priority expected: (Sighting) -> TaskPriority,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(sightings.count == bodies, "\(sightings)", sourceLocation: sourceLocation)
        for sighting in sightings {
            #expect(sighting.probe == probe, "\(sighting)", sourceLocation: sourceLocation)
            #expect(sighting.priority == expected(sighting), "\(sighting)", sourceLocation: sourceLocation)
            #expect(sighting.resolutionFrames == frames, "\(sighting)", sourceLocation: sourceLocation)
        }
    }

    /// The priority a graph task was added with, read back from its id.
    private static func graphPriority(_ sighting: Sighting) -> TaskPriority {
        priorities.first { sighting.id.hasSuffix("-\($0)") }!
    }

    private static var bodiesPerGraph: Int { priorities.count * 7 }

    // MARK: - Task-local values

    /// `start()` runs the graph in a task of its own: the values in force where it was
    /// called reach every body, though the caller has left their scope before any body runs.
    @Test(arguments: [TaskPriority.low, .high])
    func startCarriesTheCallersTaskLocalsAndEachTasksPriority(caller: TaskPriority) async throws {
        let sightings = Recorder<Sighting>()
        let graph = Self.graph(recording: sightings)
        let started = Task(priority: caller) {
            try Probe.$value.withValue("caller") { try graph.start(clock: ManualClock()) }
        }
        let report = try await started.value.report()
        #expect(report.outcome.description == "completed")
        Self.expectInherited(
            sightings.all, bodies: Self.bodiesPerGraph, probe: "caller", priority: Self.graphPriority)
    }

    @Test(arguments: [TaskPriority.low, .high])
    func runCarriesTheCallersTaskLocalsAndEachTasksPriority(caller: TaskPriority) async throws {
        let sightings = Recorder<Sighting>()
        let graph = Self.graph(recording: sightings)
        let report = try await Task(priority: caller) {
            try await Probe.$value.withValue("caller") { try await graph.run(clock: ManualClock()) }
        }.value
        #expect(report.outcome.description == "completed")
        Self.expectInherited(
            sightings.all, bodies: Self.bodiesPerGraph, probe: "caller", priority: Self.graphPriority)
    }

    /// Tasks added to a running graph run with what the run was started with.
    @Test func tasksAddedDuringTheRunInheritFromTheRun() async throws {
        let sightings = Recorder<Sighting>()
        let hold = Latch()
        var first = TaskGraph()
        first.add("held") { _ in await hold.wait() }
        let run = try Probe.$value.withValue("caller") { try first.start(clock: ManualClock()) }
        try Probe.$value.withValue("adder") { try run.add(Self.graph(recording: sightings)) }
        hold.open()
        #expect(try await run.report().outcome.description == "completed")
        Self.expectInherited(
            sightings.all, bodies: Self.bodiesPerGraph, probe: "caller", priority: Self.graphPriority)
    }

    /// The Assembly keeps the path of the creation in progress in a task-local: a factory that
    /// runs a graph hands it to every task, so a task that resolves a service the factory is
    /// creating is reported as a cycle rather than waiting for itself.
    @Test func aFactoryRunningAGraphHandsItsResolutionPathToEveryTask() async throws {
        struct Made: Sendable {}
        let sightings = Recorder<Sighting>()
        let graph = Self.graph(recording: sightings)
        let assembly = Assembly()
        assembly.register(Made.self) { _ in
            _ = try await graph.run(clock: ManualClock())
            _ = try await graph.start(clock: ManualClock()).report()
            return Made()
        }
        _ = try await Probe.$value.withValue("caller") { try await assembly.resolve(Made.self) }
        Self.expectInherited(
            sightings.all, bodies: 2 * Self.bodiesPerGraph, probe: "caller", frames: 1,
            priority: Self.graphPriority)
    }

    // MARK: - Launcher

    /// A launcher's tasks run with the task-local values in force where the launch started,
    /// at ``TaskPriority/medium`` whatever the priority of the task that started it.
    @Test(arguments: [TaskPriority.low, .high])
    func aLaunchCarriesTheStartersTaskLocalsAndRunsItsTasksAtMedium(caller: TaskPriority) async throws {
        let sightings = Recorder<Sighting>()
        let clock = ManualClock()
        let inner = Launcher("inner", dependsOn: [], clock: clock)
        try inner.add(TestStartupTask("inner-task") { Self.sight("inner-task", attempt: 1, into: sightings) })
        let launcher = Launcher(clock: clock)
        for index in 0..<3 {
            try launcher.add(
                TestStartupTask("chained-\(index)") { Self.sight("chained-\(index)", attempt: 1, into: sightings) })
            try launcher.add(
                TestStartupTask("parallel-\(index)", dependencies: []) {
                    Self.sight("parallel-\(index)", attempt: 1, into: sightings)
                })
        }
        let attempts = Lock(0)
        try launcher.add(
            TestStartupTask("retried", options: TaskOptions(retry: .attempts(2, backoff: .zero))) {
                let attempt = attempts.withLock { count in
                    count += 1
                    return count
                }
                Self.sight("retried", attempt: attempt, into: sightings)
                if attempt == 1 { throw Flaky() }
            })
        try launcher.add(
            MainActorProbeTask(name: "main") { Self.sight("main", attempt: 1, into: sightings) })
        try launcher.add(inner)
        let started = Task(priority: caller) {
            try Probe.$value.withValue("caller") { try launcher.start() }
        }
        try await started.value
        #expect(try await launcher.report().outcome.description == "completed")
        Self.expectInherited(sightings.all, bodies: 10, probe: "caller", priority: { _ in .medium })
    }

    @Test func anAwaitedLaunchCarriesTheCallersTaskLocals() async throws {
        let sightings = Recorder<Sighting>()
        let launcher = Launcher(clock: ManualClock())
        for index in 0..<4 {
            try launcher.add(
                TestStartupTask(
                    "task-\(index)", dependencies: index.isMultiple(of: 2) ? .inOrderOfAddition : .independent
                ) {
                    Self.sight("task-\(index)", attempt: 1, into: sightings)
                })
        }
        try await Probe.$value.withValue("caller") { try await launcher.run() }
        Self.expectInherited(sightings.all, bodies: 4, probe: "caller", priority: { _ in .medium })
    }
}

/// A main-actor start-up task made of a closure.
private struct MainActorProbeTask: StartupTask {
    let name: String
    let body: @MainActor @Sendable () -> Void
    var runsOnMainActor: Bool { true }
    var dependencies: TaskDependencies { .independent }

    @MainActor func run() async throws { body() }
}
