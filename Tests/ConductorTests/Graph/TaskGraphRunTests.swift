import Conductor
import ConductorTestKit
import Testing

@Suite struct TaskGraphRunTests {
    @Test func dependentsReadTypedResults() async throws {
        var graph = TaskGraph()
        let info = graph.add("basicInfo") { _ in 42 }
        let name = graph.add("name") { _ in "shoe" }
        let title = graph.add("title", dependsOn: ["basicInfo", "name"]) { context in
            "\(try context.value(of: name)) #\(try context.value(of: info))"
        }
        let captured = Recorder<String>()
        graph.add("render", dependsOn: ["title"]) { context in captured.append(try context.value(of: title)) }
        let report = try await graph.run()
        #expect(report.isSuccess)
        #expect(captured.all == ["shoe #42"])
        #expect(report.tasks.map(\.id) == ["basicInfo", "name", "title", "render"])
        #expect(report.tasks.allSatisfy { $0.outcome.isSuccess && $0.attempts == 1 })
    }

    /// A closure that returns nothing takes the overloads that keep it unwrapped; one that
    /// returns a value, even a one-expression closure, must still take the generic ones.
    @Test func closuresThatReturnNothingAndClosuresThatReturnAValueKeepTheirTypes() async throws {
        var graph = TaskGraph()
        let nothing: TaskHandle<Void> = graph.add("nothing") { _ in }
        let number = graph.add("number") { _ in 41 }
        let sum = graph.add("sum", dependsOn: ["nothing", "number"]) { context in
            try context.value(of: nothing)
            return try context.value(of: number) + 1
        }
        let failing: TaskHandle<Void> = graph.add("failing", options: TaskOptions(failure: .optional)) { _ in
            throw CancellationError()
        }
        let run = try graph.start()
        let fromStep = try run.add("fromStep", dependsOn: ["sum"]) { context in try context.value(of: sum) * 2 }
        let recorder = Recorder<Int>()
        try run.add("read", dependsOn: ["fromStep"]) { context in recorder.append(try context.value(of: fromStep)) }
        let report = try await run.report()
        #expect(recorder.all == [84])
        #expect(report[failing.id]?.outcome.kind == .cancelled)
        #expect(report.tasks.filter { $0.id != failing.id }.allSatisfy { $0.outcome.isSuccess })
    }

    @Test func noTaskStartsBeforeItsDependenciesEnd() async throws {
        let log = Recorder<String>()
        var graph = TaskGraph()
        graph.add("a") { _ in log.append("a") }
        graph.add("b", dependsOn: ["a"]) { _ in log.append("b") }
        graph.add("c", dependsOn: ["a"]) { _ in log.append("c") }
        graph.add("d", dependsOn: ["b", "c"]) { _ in log.append("d") }
        _ = try await graph.run()
        let order = log.all
        #expect(order.first == "a")
        #expect(order.last == "d")
        #expect(Set(order) == ["a", "b", "c", "d"])
    }

    @Test func requiredFailureEndsTheRunAndCancelsTheRest() async throws {
        struct Boom: Error {}
        let blocker = Latch()
        let started = Latch()
        var graph = TaskGraph()
        graph.add("slow") { _ in
            started.open()
            // Ends only when the run cancels it: the failure's event reaches the test before
            // the run's cancel reaches this body, so nothing the test does may end it.
            _ = await blocker.waitCancellable()
            try Task.checkCancellation()
        }
        graph.add("fails") { _ in
            await started.wait()
            throw Boom()
        }
        graph.add("after", dependsOn: ["fails"]) { _ in }
        let run = try graph.start()
        var sawFailure = false
        for await event in run.events {
            if case .taskFailed("fails", _, _) = event { sawFailure = true }
        }
        let report = try await run.report()
        #expect(sawFailure)
        guard case .failed(let error) = report.outcome else {
            Issue.record("expected a failed run, got \(report.outcome)")
            return
        }
        #expect(error.code == .taskFailed)
        #expect(error.taskID == "fails")
        #expect(report["after"].map { "\($0.outcome)" } == "cancelled")
        #expect(report["slow"].map { "\($0.outcome)" } == "cancelled")
    }

    @Test func optionalFailureSkipsDependentsUnlessTheyRunAnyway() async throws {
        struct Boom: Error {}
        var graph = TaskGraph()
        let comments = graph.add("comments", options: TaskOptions(failure: .optional)) { _ -> [String] in throw Boom() }
        // Optional too: a required task skipped would end the run (RequiredOutcomeTests).
        graph.add("commentCount", dependsOn: ["comments"], options: TaskOptions(failure: .optional)) { context in
            try context.value(of: comments).count
        }
        graph.add("grandchild", dependsOn: ["commentCount"], options: TaskOptions(failure: .optional)) { _ in }
        let fallback = Recorder<String>()
        graph.add("page", dependsOn: ["comments"], options: TaskOptions(whenDependencyFails: .runAnyway)) { context in
            do throws(GraphError) {
                _ = try context.value(of: comments)
            } catch {
                fallback.append("\(error.code)")
            }
        }
        let report = try await graph.run()
        #expect(report.isSuccess)
        #expect("\(report["comments"]!.outcome)".hasPrefix("failed"))
        #expect("\(report["commentCount"]!.outcome)" == "skipped ('comments' did not succeed)")
        #expect("\(report["grandchild"]!.outcome)" == "skipped ('commentCount' did not succeed)")
        #expect(report["page"]!.outcome.isSuccess)
        #expect(fallback.all == ["resultUnavailable"])
    }

    @Test func concurrencyLimitOrdersReadyTasksByPriority() async throws {
        let order = Recorder<String>()
        let gate = Latch()
        var graph = TaskGraph()
        graph.add("blocker", options: TaskOptions(priority: .high)) { _ in await gate.wait() }
        graph.add("low", dependsOn: [], options: TaskOptions(priority: .low)) { _ in order.append("low") }
        graph.add("medium", options: TaskOptions(priority: .medium)) { _ in order.append("medium") }
        graph.add("high", options: TaskOptions(priority: .high)) { _ in order.append("high") }
        graph.add("high2", options: TaskOptions(priority: .high)) { _ in order.append("high2") }
        let run = try graph.start(concurrencyLimit: 1)
        for await event in run.events {
            if case .taskStarted("blocker", _, _) = event { gate.open() }
        }
        _ = try await run.report()
        #expect(order.all == ["high", "high2", "medium", "low"])
    }

    /// A run's first roots are taken by a cursor and tasks made ready later from priority
    /// lanes: a later task of a higher priority still goes before a waiting root, and one of
    /// the same priority after it (first in, first out).
    @Test func tasksReadyLaterTakeTurnsWithTheRootsByPriority() async throws {
        let order = Recorder<String>()
        var graph = TaskGraph()
        graph.add("first", options: TaskOptions(priority: .high)) { _ in order.append("first") }
        graph.add("rootMedium", options: TaskOptions(priority: .medium)) { _ in order.append("rootMedium") }
        graph.add("rootLow", options: TaskOptions(priority: .low)) { _ in order.append("rootLow") }
        graph.add("afterHigh", dependsOn: ["first"], options: TaskOptions(priority: .high)) { _ in
            order.append("afterHigh")
        }
        graph.add("afterMedium", dependsOn: ["first"], options: TaskOptions(priority: .medium)) { _ in
            order.append("afterMedium")
        }
        let run = try graph.start(concurrencyLimit: 1)
        #expect(try await run.report().isSuccess)
        #expect(order.all == ["first", "afterHigh", "rootMedium", "afterMedium", "rootLow"])
    }

    @Test func mainActorTasksRunOnTheMainActor() async throws {
        var graph = TaskGraph()
        let onMain = graph.addOnMainActor("ui") { _ in
            MainActor.assertIsolated()
            return true
        }
        graph.add("after", dependsOn: ["ui"]) { context in
            let value = try context.value(of: onMain)
            #expect(value)
        }
        let report = try await graph.run()
        #expect(report.isSuccess)
        #expect(report["ui"]?.placement == "main actor")
    }

    @Test func eventsReplayFromTheStartAndEndWithRunFinished() async throws {
        var graph = TaskGraph()
        graph.add("a") { _ in }
        graph.add("b", dependsOn: ["a"]) { _ in }
        let run = try graph.start()
        _ = try await run.report()
        var descriptions: [String] = []
        for await event in run.events {
            switch event {
            case .taskQueued(let id, _): descriptions.append("queued \(id)")
            case .taskStarted(let id, _, _): descriptions.append("started \(id)")
            case .taskSucceeded(let id, _): descriptions.append("succeeded \(id)")
            case .runFinished: descriptions.append("finished")
            default: descriptions.append("other")
            }
        }
        #expect(
            descriptions == [
                "queued a", "started a", "succeeded a", "queued b", "started b", "succeeded b", "finished",
            ])
    }

    @Test func observerGetsEveryEventOnItsTarget() async throws {
        var graph = TaskGraph()
        graph.add("a") { _ in }
        graph.add("b") { _ in }
        let run = try graph.start()
        let seen = Recorder<String>()
        let done = Latch()
        run.observe(on: .mainActor) { event in
            MainActor.assertIsolated()
            seen.append(event.taskID ?? "run")
            if case .runFinished = event { done.open() }
        }
        await done.wait()
        #expect(seen.all.count == 7)
        #expect(seen.all.last == "run")
    }

    @Test func criticalPathFollowsTheLastDependencyToEnd() async throws {
        let clock = ManualClock()
        var graph = TaskGraph()
        graph.add("short") { _ in }
        graph.add("long") { _ in try await clock.sleep(for: .seconds(2)) }
        graph.add("join", dependsOn: ["short", "long"]) { _ in }
        graph.add("side") { _ in }
        let run = try graph.start(clock: clock)
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(2))
        let report = try await run.report()
        #expect(report.criticalPath == ["long", "join"])
        #expect(report.duration == .seconds(2))
        #expect(report["long"]?.runTime == .seconds(2))
        #expect(report["join"]?.waitTime == .zero)
    }
}
