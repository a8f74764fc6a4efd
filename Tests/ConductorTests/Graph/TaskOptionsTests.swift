import ConductorTestKit
import Testing

@testable import ConductorGraph

/// One options value for every way of adding a task, and a named type for its dependencies.
@Suite struct TaskOptionsTests {
    private struct Offline: Error {}

    // MARK: - The values

    @Test func defaultsAreARequiredMediumTaskTriedOnceWithNoTimeLimit() {
        let options = TaskOptions()
        #expect(options.priority == .medium)
        #expect(options.timeout == nil)
        #expect(options.retry == .never)
        #expect(options.failure == .required)
        #expect(options.whenDependencyFails == .skip)
        #expect(
            options
                == TaskOptions(
                    priority: .medium, timeout: nil, retry: .never, failure: .required, whenDependencyFails: .skip))
    }

    /// `TaskPriority` is not `Hashable`: options hash by its raw value, consistently with `==`.
    @Test func optionsAreHashableByEverySetting() {
        let set: Set = [
            TaskOptions(), TaskOptions(), TaskOptions(priority: .high), TaskOptions(timeout: .seconds(1)),
            TaskOptions(retry: .attempts(2)), TaskOptions(failure: .optional),
            TaskOptions(whenDependencyFails: .runAnyway),
        ]
        #expect(set.count == 6)
    }

    @Test func dependenciesNameTheirKind() {
        let literal: TaskDependencies = ["a", "b"]
        #expect(literal == .on(["a", "b"]))
        #expect(literal.names == ["a", "b"])
        let none: TaskDependencies = []
        #expect(none == .independent)
        #expect(TaskDependencies.on([]) == .independent)
        #expect(TaskDependencies.inOrderOfAddition != .independent)
        #expect(TaskDependencies.inOrderOfAddition.isInOrderOfAddition)
        #expect(TaskDependencies.inOrderOfAddition.names.isEmpty)
        #expect(!TaskDependencies.independent.isInOrderOfAddition)
        #expect("\(TaskDependencies.independent)" == "independent")
        #expect("\(TaskDependencies.inOrderOfAddition)" == "in order of addition")
        #expect("\(literal)" == #"on ["a", "b"]"#)
    }

    // MARK: - Every add takes them

    /// An optional task's failure does not fail the run: each way of adding passes its options on.
    @Test func everyAddTakesOptions() async throws {
        let optional = TaskOptions(failure: .optional)
        var graph = TaskGraph()
        graph.add("value", options: optional) { _ -> Int in throw Offline() }
        graph.add("void", options: optional) { _ in throw Offline() }
        graph.addOnMainActor("main", options: optional) { _ -> Int in throw Offline() }
        // Held until the run's own task is added, so the run cannot end first.
        let added = Latch()
        graph.add("hold") { _ in await added.wait() }
        let report = try await graph.run { run in
            _ = try? run.add("added", options: optional) { _ -> Int in throw Offline() }
            added.open()
        }
        #expect(report.outcome == .completed)
        for id in ["value", "void", "main", "added"] {
            #expect(report[id].map { "\($0.outcome)" }?.hasPrefix("failed") == true, "\(id)")
        }
    }

    @Test func aStepTakesOptions() async throws {
        let schedule = Schedule {
            Stage("only") {
                Step("value", options: TaskOptions(failure: .optional)) { _ -> Int in throw Offline() }
                Step("void", options: TaskOptions(retry: .attempts(2, backoff: .zero))) { context in
                    if context.attempt == 1 { throw Offline() }
                }
            }
        }
        let report = try await schedule.run()
        #expect(report.outcome == .completed)
        #expect(report["value"].map { "\($0.outcome)" }?.hasPrefix("failed") == true)
        #expect(report["void"]?.attempts == 2)
    }

    @Test func theOptionsPriorityIsTheBodysBasePriority() async throws {
        let seen = Recorder<TaskPriority?>()
        var graph = TaskGraph()
        graph.add("low", options: TaskOptions(priority: .low)) { _ in seen.append(Task.basePriority) }
        _ = try await graph.run()
        #expect(seen.all == [.low])
    }

    @Test func theOptionsTimeoutEndsTheAttempt() async throws {
        let clock = ManualClock()
        let never = Latch()
        var graph = TaskGraph()
        graph.add("stuck", options: TaskOptions(timeout: .seconds(1), failure: .optional)) { _ in await never.wait() }
        let run = try graph.start(clock: clock)
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(1))
        let report = try await run.report()
        #expect(report["stuck"].map { "\($0.outcome)" } == "timed out after 1.00 s")
        never.open()
    }

    // MARK: - A graph has no order of addition

    @Test func aGraphTaskInOrderOfAdditionIsReportedNamingIt() async throws {
        var graph = TaskGraph()
        graph.add("a") { _ in }
        graph.add("b", dependsOn: .inOrderOfAddition) { _ in }
        let error = try #require(throws: GraphError.self) { try graph.validate() }
        #expect(error.code == .invalidConfiguration)
        #expect(
            error.message
                == "task 'b' depends on the order of addition, which only a launcher has; name its dependencies")
        #expect(error.taskID == "b")
        #expect(throws: GraphError.self) { try graph.start() }

        graph.remove("b")
        try graph.validate()
    }

    @Test func aRunOrAStepRejectsTheOrderOfAdditionToo() async throws {
        let schedule = Schedule { Stage("s") { Step("x", dependsOn: .inOrderOfAddition) { _ in } } }
        let stepError = try #require(throws: GraphError.self) { try schedule.validate() }
        #expect(stepError.taskID == "x")

        let held = Latch()
        var graph = TaskGraph()
        graph.add("hold") { _ in await held.wait() }
        let run = try graph.start()
        let addError = try #require(throws: GraphError.self) {
            try run.add("late", dependsOn: .inOrderOfAddition) { _ in }
        }
        #expect(addError.code == .invalidConfiguration)
        #expect(addError.taskID == "late")
        held.open()
        #expect(try await run.report().outcome == .completed)
        #expect(try await run.report()["late"] == nil, "nothing was added")
    }
}
