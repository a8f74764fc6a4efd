import ConductorTestKit
import Synchronization
import Testing

@testable import ConductorCore
@testable import ConductorGraph

/// Removing a task whose body runs on one of the run's workers (`stillRunning`): the body is
/// cancelled — `Task.isCancelled`, its cancellation handlers — and the task ends cancelled and
/// removed whatever the body then does, like a removal before it started. Each body waits on a
/// latch the test opens after the removal, so the removal lands while it runs.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct RunningRemovalTests {
    private struct Fault: Error {}

    // MARK: - The body sees it

    /// The body sees the cancellation; the value it returns is discarded, the task is
    /// reported cancelled and removed, and its dependent is skipped without running.
    @Test func theBodySeesCancellationAndTheTaskEndsCancelledAndRemoved() async throws {
        let began = Latch()
        let release = Latch()
        let sawCancellation = Recorder<Bool>()
        let dependentRan = Atomic(false)
        var graph = TaskGraph()
        let fetch = graph.add("fetch") { _ in
            began.open()
            await release.wait()
            sawCancellation.append(Task.isCancelled)
            return 42
        }
        graph.add("show", dependsOn: ["fetch"]) { context in
            _ = try context.value(of: fetch)
            dependentRan.store(true, ordering: .relaxed)
        }
        let run = try graph.start()
        await began.wait()
        #expect(try run.remove("fetch") == .stillRunning)
        release.open()
        let report = try await run.report()
        #expect(sawCancellation.all == [true])
        #expect(report["fetch"]?.outcome.kind == .cancelled)
        #expect(report["fetch"]?.wasRemoved == true)
        #expect(report["fetch"]?.attempts == 1)
        #expect(report["fetch"]?.startedAt != nil)
        #expect(report["show"]?.outcome.kind == .skipped(dependency: "fetch"))
        #expect(report["show"]?.wasRemoved == false)
        let dependentDidRun = dependentRan.load(ordering: .relaxed)
        #expect(!dependentDidRun)
        #expect(report.outcome == .completed)
        #expect(run.storage.result(of: "fetch") == nil, "the removed task's value was kept")
    }

    /// The body's `withTaskCancellationHandler` fires on the removal: the test waits for it,
    /// so a removal that did not cancel the body would hang here until the time limit.
    @Test func theBodysCancellationHandlerFires() async throws {
        let began = Latch()
        let handled = Latch()
        let release = Latch()
        var graph = TaskGraph()
        graph.add("stream") { _ in
            await withTaskCancellationHandler {
                began.open()
                await release.wait()
            } onCancel: {
                handled.open()
            }
        }
        let run = try graph.start()
        await began.wait()
        #expect(try run.remove("stream") == .stillRunning)
        await handled.wait()
        release.open()
        let report = try await run.report()
        #expect(report["stream"]?.outcome.kind == .cancelled)
        #expect(report["stream"]?.wasRemoved == true)
    }

    /// A body that throws once it sees the cancellation ends the same way: cancelled, removed.
    @Test func aBodyThatThrowsOnCancellationEndsCancelledAndRemoved() async throws {
        let began = Latch()
        let release = Latch()
        var graph = TaskGraph()
        graph.add("upload") { _ in
            began.open()
            await release.wait()
            try Task.checkCancellation()
            throw Fault()
        }
        let run = try graph.start()
        await began.wait()
        #expect(try run.remove("upload") == .stillRunning)
        release.open()
        let report = try await run.report()
        #expect(report["upload"]?.outcome.kind == .cancelled)
        #expect(report["upload"]?.wasRemoved == true)
    }

    // MARK: - Required tasks and the next task

    /// A required task removed while it runs is excused, as one removed before it started:
    /// even if its body then fails, the run completes, and so does a required task skipped
    /// because it needed it.
    @Test(arguments: [false, true])
    func aRequiredTaskRemovedWhileRunningDoesNotFailTheRun(bodyFails: Bool) async throws {
        let began = Latch()
        let release = Latch()
        var graph = TaskGraph()
        graph.add("migrate", options: TaskOptions(failure: .required)) { _ in
            began.open()
            await release.wait()
            if bodyFails { throw Fault() }
        }
        graph.add("serve", dependsOn: ["migrate"], options: TaskOptions(failure: .required)) { _ in }
        let run = try graph.start()
        await began.wait()
        #expect(try run.remove("migrate") == .stillRunning)
        release.open()
        let report = try await run.report()
        #expect(report.outcome == .completed)
        #expect(report["migrate"]?.outcome.kind == .cancelled)
        #expect(report["serve"]?.outcome.kind == .skipped(dependency: "migrate"))
    }

    /// The worker whose task is cancelled retires after that body: the task that runs next
    /// (under a limit of 1, so it waited for the removed one's place) gets a fresh worker and
    /// is not cancelled, and neither is any task after it.
    @Test func theTaskRunAfterARemovedOneIsNotCancelled() async throws {
        let began = Latch()
        let release = Latch()
        let cancelledSeen = Recorder<String>()
        var graph = TaskGraph()
        graph.add("first", options: TaskOptions(priority: .high)) { _ in
            began.open()
            await release.wait()
        }
        for id in ["second", "third"] {
            graph.add(id, options: TaskOptions(priority: .low)) { _ in
                if Task.isCancelled { cancelledSeen.append(id) }
                await Task.yield()
                if Task.isCancelled { cancelledSeen.append(id) }
            }
        }
        graph.add("after", dependsOn: ["second"], options: TaskOptions(priority: .low)) { _ in
            if Task.isCancelled { cancelledSeen.append("after") }
        }
        let run = try graph.start(concurrencyLimit: 1)
        await began.wait()
        #expect(try run.remove("first") == .stillRunning)
        release.open()
        let report = try await run.report()
        #expect(cancelledSeen.all.isEmpty, "cancelled: \(cancelledSeen.all)")
        #expect(report["first"]?.outcome.kind == .cancelled)
        for id in ["second", "third", "after"] {
            #expect(report[id]?.outcome.kind == .succeeded, "\(id)")
        }
        #expect(report.outcome == .completed)
    }

    /// A task with retries removed while its first attempt runs: that body sees the
    /// cancellation, no attempt follows however the clock moves, and it ends cancelled and
    /// removed after one attempt — whether the body then returns or fails.
    @Test(arguments: [false, true])
    func aTaskWithRetriesGetsNoFurtherAttempt(bodyFails: Bool) async throws {
        let clock = ManualClock()
        let began = Latch()
        let release = Latch()
        let attempts = Recorder<(attempt: Int, cancelled: Bool)>()
        var graph = TaskGraph()
        graph.add("sync", options: TaskOptions(retry: .attempts(3, backoff: .seconds(1)))) { context in
            began.open()
            await release.wait()
            attempts.append((context.attempt, Task.isCancelled))
            if bodyFails { throw Fault() }
        }
        let run = try graph.start(clock: clock)
        await began.wait()
        #expect(try run.remove("sync") == .stillRunning)
        release.open()
        let report = try await reportAdvancing(run, clock, by: .seconds(1), maxSteps: 10)
        #expect(attempts.all.map(\.attempt) == [1])
        #expect(attempts.all.map(\.cancelled) == [true])
        #expect(report["sync"]?.outcome.kind == .cancelled)
        #expect(report["sync"]?.wasRemoved == true)
        #expect(report["sync"]?.attempts == 1)
    }

    /// A body in a task of its own (a timeout) is abandoned, as before: the removal answers
    /// `abandoned` and the run goes on without waiting for it.
    @Test func aBodyInATaskOfItsOwnIsStillAbandoned() async throws {
        let began = Latch()
        let release = Latch()
        var graph = TaskGraph()
        graph.add("slow", options: TaskOptions(timeout: .seconds(3600))) { _ in
            began.open()
            await release.wait()
        }
        let run = try graph.start()
        await began.wait()
        #expect(try run.remove("slow") == .abandoned)
        let report = try await run.report()
        release.open()
        #expect(report["slow"]?.outcome.kind == .cancelled)
        #expect(report["slow"]?.wasRemoved == true)
    }

    // MARK: - Bodies that hop

    /// A main-actor body runs in its worker's task, hopped to the main actor: cancelling the
    /// worker reaches it.
    @Test func aMainActorBodySeesTheRemoval() async throws {
        let began = Latch()
        let release = Latch()
        let seen = Recorder<Bool>()
        var graph = TaskGraph()
        graph.addOnMainActor("render") { _ in
            MainActor.assertIsolated()
            began.open()
            await release.wait()
            seen.append(Task.isCancelled)
        }
        let run = try graph.start()
        await began.wait()
        #expect(try run.remove("render") == .stillRunning)
        release.open()
        let report = try await run.report()
        #expect(seen.all == [true])
        #expect(report["render"]?.outcome.kind == .cancelled)
        #expect(report["render"]?.wasRemoved == true)
    }

    /// A task of another priority than its worker's runs in a child task at its own priority
    /// (the worker was made for "first"): cancelling the worker cancels that child too.
    @Test func aBodyInAChildAtAnotherPrioritySeesTheRemoval() async throws {
        let began = Latch()
        let release = Latch()
        let seen = Recorder<(cancelled: Bool, priority: TaskPriority)>()
        var graph = TaskGraph()
        graph.add("first", options: TaskOptions(priority: .medium)) { _ in }
        graph.add("urgent", dependsOn: ["first"], options: TaskOptions(priority: .high)) { _ in
            began.open()
            await release.wait()
            seen.append((Task.isCancelled, Task.basePriority ?? .medium))
        }
        let run = try graph.start(concurrencyLimit: 1)
        await began.wait()
        #expect(try run.remove("urgent") == .stillRunning)
        release.open()
        let report = try await run.report()
        #expect(seen.all.map(\.cancelled) == [true])
        #expect(seen.all.map(\.priority) == [.high])
        #expect(report["urgent"]?.outcome.kind == .cancelled)
        #expect(report["urgent"]?.wasRemoved == true)
    }

    /// A body that removes its own task: it sees its own cancellation at once.
    @Test func aBodyThatRemovesItsOwnTaskIsCancelled() async throws {
        let seen = Recorder<Bool>()
        let answers = Recorder<TaskRemoval>()
        var graph = TaskGraph()
        graph.add("self") { context in
            answers.append(try context.run.remove("self"))
            seen.append(Task.isCancelled)
        }
        let report = try await graph.run()
        #expect(answers.all == [.stillRunning])
        #expect(seen.all == [true])
        #expect(report["self"]?.outcome.kind == .cancelled)
        #expect(report["self"]?.wasRemoved == true)
    }

    // MARK: - The race with the body's own end

    /// The removal races the body's return, over seeded runs: exactly one outcome either way —
    /// the body's end won (`alreadyEnded`, succeeded, not removed), the removal came first
    /// (`stillRunning`, cancelled and removed), or the task had not been handed out
    /// (`prevented`, its body never ran). Its dependent runs only after a success, and the
    /// task that runs next on a fresh worker is never cancelled.
    @Test func theRemovalRacesTheBodysReturn() async throws {
        var answers: [TaskRemoval: Int] = [:]
        for seed in UInt64(1)...300 {
            var generator = SeededGenerator(seed: seed)
            let bodyYields = Int.random(in: 0...4, using: &generator)
            let removerYields = Int.random(in: 0...6, using: &generator)
            let bodies = Recorder<String>()
            let cancelledNext = Atomic(false)
            var graph = TaskGraph()
            graph.add("race", options: TaskOptions(priority: .high)) { _ in
                bodies.append("race")
                for _ in 0..<bodyYields { await Task.yield() }
                return seed
            }
            graph.add("dependent", dependsOn: ["race"]) { _ in bodies.append("dependent") }
            graph.add("next", options: TaskOptions(priority: .low)) { _ in
                if Task.isCancelled { cancelledNext.store(true, ordering: .relaxed) }
            }
            let run = try graph.start(concurrencyLimit: 1)
            for _ in 0..<removerYields { await Task.yield() }
            let answer = try run.remove("race")
            let report = try await run.report()
            answers[answer, default: 0] += 1
            let record = try #require(report["race"])
            let context = "seed \(seed): \(answer)"
            switch answer {
            case .alreadyEnded:
                #expect(record.outcome.kind == .succeeded, "\(context)")
                #expect(!record.wasRemoved, "\(context)")
                #expect(report["dependent"]?.outcome.kind == .succeeded, "\(context)")
            case .stillRunning, .prevented:
                #expect(record.outcome.kind == .cancelled, "\(context)")
                #expect(record.wasRemoved, "\(context)")
                #expect(report["dependent"]?.outcome.kind == .skipped(dependency: "race"), "\(context)")
                #expect(!bodies.all.contains("dependent"), "\(context)")
                if answer == .prevented { #expect(!bodies.all.contains("race"), "\(context)") }
            case .abandoned:
                Issue.record("\(context): a body on a worker is never abandoned")
            }
            let nextWasCancelled = cancelledNext.load(ordering: .relaxed)
            #expect(!nextWasCancelled, "\(context): the next task was cancelled")
            #expect(report["next"]?.outcome.kind == .succeeded, "\(context)")
            #expect(report.outcome == .completed, "\(context)")
        }
        print("theRemovalRacesTheBodysReturn:", answers)
        #expect(answers[.stillRunning, default: 0] > 0, "answers over the seeds: \(answers)")
    }

    // MARK: - The state machine and the registry

    /// The transitions alone: the removal pins the task's worker and asks for its task to be
    /// cancelled; the body's success then ends the task cancelled and removed, and the worker
    /// takes no next task even though one is ready.
    @Test func theMachineEndsTheRemovedTaskCancelledAndRetiresItsWorker() throws {
        var graph = TaskGraph()
        graph.add("a", options: TaskOptions(priority: .high)) { _ in }
        graph.add("b", options: TaskOptions(priority: .low)) { _ in }
        var (machine, node) = try GraphStateMachine.handingOutTheFirstTask(of: graph)
        let worker = machine.table.nodes[node].remaining
        let task = withUnsafeCurrentTask { $0.map(WorkerTask.init) }
        _ = machine.registerWorker(running: node, task: task, helper: false)
        var effects = GraphEffects()
        #expect(machine.remove("a", now: 1, effects: &effects) == .stillRunning)
        #expect(effects.cancelWorkers.map(\.id) == [worker])
        // A second removal pins nothing more.
        var again = GraphEffects()
        #expect(machine.remove("a", now: 1, effects: &again) == .stillRunning)
        #expect(again.cancelWorkers.isEmpty)
        let next = machine.complete(node, outcome: .succeeded, startedAt: 0, now: 2, effects: &effects)
        #expect(next == nil)
        let mustWait = machine.workers.registry.close(worker)
        #expect(mustWait, "pinned: the worker must wait for the unpin")
        let waiter = machine.workers.registry.unpin(worker)
        #expect(waiter == nil)
        let report = RunReport(of: machine)
        #expect(report["a"]?.outcome.kind == .cancelled)
        #expect(report["a"]?.wasRemoved == true)
        #expect(report["b"]?.wasRemoved == false)
    }

    /// A removal before the worker registered finds no task to cancel: the worker, when it
    /// registers, learns its first body must not begin.
    @Test func aRemovalBeforeTheWorkerRegisteredKeepsTheBodyFromBeginning() throws {
        var graph = TaskGraph()
        graph.add("a") { _ in }
        var (machine, node) = try GraphStateMachine.handingOutTheFirstTask(of: graph)
        var effects = GraphEffects()
        #expect(machine.remove("a", now: 1, effects: &effects) == .stillRunning)
        #expect(effects.cancelWorkers.isEmpty)
        let task = withUnsafeCurrentTask { $0.map(WorkerTask.init) }
        let starts = machine.registerWorker(running: node, task: task, helper: false).starts
        #expect(!starts)
    }

    /// The pin protocol: a worker closing while pinned waits, and the last unpin resumes it;
    /// an unpin between the close and the wait lets the wait go at once; a worker not pinned
    /// closes at once, and a closed one is never pinned.
    @Test func aPinnedWorkerWaitsForItsUnpin() async {
        let shared = Registry()
        let (first, second) = shared.lock.withLock { ($0.open(), $0.open()) }
        let task = withUnsafeCurrentTask { $0.map(WorkerTask.init) }
        shared.lock.withLock { registry in
            registry.register(first, task: task)
            registry.register(second, task: task)
        }
        let pinnedFirst = shared.lock.withLock { $0.pin(first) }
        #expect(pinnedFirst != nil)
        let firstMustWait = shared.lock.withLock { $0.close(first) }
        #expect(firstMustWait)
        let registered = Latch()
        let waited = Atomic(false)
        let closing = Task {
            await shared.lock.suspendIgnoringCancellation(
                { (registry: inout WorkerRegistry, waiter) in
                    let decision = registry.awaitUnpinned(first, waiter)
                    if case .wait = decision { waited.store(true, ordering: .relaxed) }
                    return decision
                },
                perform: { _ in registered.open() })
        }
        await registered.wait()
        let didWait = waited.load(ordering: .relaxed)
        #expect(didWait, "a pinned worker went on")
        let waiter = shared.lock.withLock { $0.unpin(first) }
        #expect(waiter != nil)
        waiter?.resume(returning: ())
        await closing.value
        let openAfterFirst = shared.lock.withLock { $0.openCount }
        #expect(openAfterFirst == 1)
        // Unpinned between its close and its wait.
        let pinnedSecond = shared.lock.withLock { $0.pin(second) }
        #expect(pinnedSecond != nil)
        let secondMustWait = shared.lock.withLock { $0.close(second) }
        #expect(secondMustWait)
        let waiterOfSecond = shared.lock.withLock { $0.unpin(second) }
        #expect(waiterOfSecond == nil)
        await shared.lock.suspendIgnoringCancellation { (registry: inout WorkerRegistry, waiter) in
            registry.awaitUnpinned(second, waiter)
        }
        let openAfterSecond = shared.lock.withLock { $0.openCount }
        #expect(openAfterSecond == 0)
        let pinAfterClose = shared.lock.withLock { $0.pin(second) }
        #expect(pinAfterClose == nil, "a closed worker is never pinned")
        let third = shared.lock.withLock { $0.open() }
        let closedAtOnce = shared.lock.withLock { $0.close(third) }
        #expect(!closedAtOnce)
    }

    /// A registry under a lock, shared with a task.
    private final class Registry: Sendable {
        let lock = Lock(WorkerRegistry())
    }
}
