import ConductorTestKit
import Testing

@testable import ConductorGraph

/// Subtasks that join (``TaskContext/addSubtask(_:dependsOn:options:_:)``,
/// ``TaskContext/join()``): a joining parent holds no place of its run, so joins finish under
/// any `concurrencyLimit`.
@Suite(.timeLimit(.minutes(1))) struct SubtaskJoinTests {
    private struct Offline: Error {}

    /// Fibonacci by subtasks: each task of n > 1 adds two subtasks and joins them.
    private static func fibonacci(_ n: Int, _ context: TaskContext) async throws -> Int {
        guard n > 1 else { return n }
        let left = try context.addSubtask("l") { try await fibonacci(n - 1, $0) }
        let right = try context.addSubtask("r") { try await fibonacci(n - 2, $0) }
        try await context.join()
        return try context.value(of: left) + context.value(of: right)
    }

    /// The deadlock case: under `concurrencyLimit: 1` the parent's place is the only
    /// one, and its subtasks can run only because the joining parent gives it back.
    @Test func aJoinUnderALimitOfOneFinishes() async throws {
        var graph = TaskGraph()
        let parent = graph.add("parent") { context in
            let child = try context.addSubtask("child") { _ in 20 }
            try await context.join()
            return try context.value(of: child) + 1
        }
        let run = try graph.start(concurrencyLimit: 1)
        #expect(try await run.value(of: parent) == 21)
        let report = try await run.report()
        #expect(report.outcome == .completed)
        #expect(report.tasks.map(\.id) == ["parent", "parent/child"])
        #expect(report["parent/child"]?.parent == "parent")
        #expect(report["parent"]?.parent == nil)
    }

    @Test(arguments: [1, 2, nil])
    func recursiveFibonacciBySubtasks(limit: Int?) async throws {
        var graph = TaskGraph()
        let root = graph.add("fib") { try await Self.fibonacci(11, $0) }
        let run = try graph.start(concurrencyLimit: limit)
        #expect(try await run.value(of: root) == 89)
        let report = try await run.report()
        #expect(report.outcome == .completed)
        // fib(11) makes 287 calls: every task but the root is a subtask.
        #expect(report.tasks.count == 287)
        #expect(report.tasks.allSatisfy { $0.outcome.isSuccess })
        // Depth first: each subtask right after its parent or its elder sibling's subtree.
        #expect(Array(report.tasks.prefix(4).map(\.id)) == ["fib", "fib/l", "fib/l/l", "fib/l/l/l"])
        for task in report.tasks.dropFirst() {
            let parent = try #require(task.parent)
            #expect(task.id.hasPrefix(parent + "/"))
        }
    }

    /// Subtasks that have ended before the join: it returns at once.
    @Test func aJoinAfterTheSubtasksEndedReturnsAtOnce() async throws {
        let childEnded = Latch()
        var graph = TaskGraph()
        let parent = graph.add("parent") { context in
            try context.addSubtask("child") { _ in }
            // The report of the child's end is in the run when the milestone is reached.
            try context.run.add("watch", dependsOn: ["parent/child"]) { _ in childEnded.open() }
            await childEnded.wait()
            try await context.join()
            return "joined"
        }
        let run = try graph.start(concurrencyLimit: 2)
        #expect(try await run.value(of: parent) == "joined")
        #expect(try await run.report().outcome == .completed)
    }

    /// The run is cancelled while the parent joins: `join()` throws `cancelled`.
    @Test func aJoinOfACancelledRunThrows() async throws {
        let childStarted = Latch()
        let seen = Recorder<GraphError>()
        var graph = TaskGraph()
        graph.add("parent") { context in
            try context.addSubtask("child") { _ in
                childStarted.open()
                _ = await Latch().waitCancellable()
            }
            do throws(GraphError) {
                try await context.join()
            } catch {
                seen.append(error)
                throw error
            }
        }
        let run = try graph.start(concurrencyLimit: 1)
        await childStarted.wait()
        run.cancel()
        #expect(try await run.report().outcome == .cancelled)
        let error = try #require(seen.all.first)
        #expect(error.code == .cancelled)
        #expect(error.message == "task 'parent' stopped waiting for its subtasks: the run was stopped")
    }

    /// An optional subtask fails: the join returns, the parent reads the failure as
    /// `resultUnavailable` and goes on; the run completes.
    @Test func aFailingOptionalSubtaskLetsTheParentGoOn() async throws {
        var graph = TaskGraph()
        let parent = graph.add("parent") { context in
            let good = try context.addSubtask("good") { _ in 1 }
            let bad = try context.addSubtask("bad", options: TaskOptions(failure: .optional)) { _ -> Int in
                throw Offline()
            }
            try await context.join()
            let fallback = (try? context.value(of: bad)) ?? 10
            return try context.value(of: good) + fallback
        }
        let run = try graph.start(concurrencyLimit: 1)
        #expect(try await run.value(of: parent) == 11)
        let report = try await run.report()
        #expect(report.outcome == .completed)
        #expect(report["parent/bad"]?.outcome.kind == .failed)
        #expect(report.tasks.map(\.id) == ["parent", "parent/good", "parent/bad"])
    }

    /// A retried parent adds its subtasks again under new ids, and joins only its own
    /// attempt's.
    @Test func aRetriedParentsAttemptsAddSubtasksUnderTheirOwnIDs() async throws {
        var graph = TaskGraph()
        let parent = graph.add("parent", options: TaskOptions(retry: .attempts(2, backoff: .zero))) { context in
            let child = try context.addSubtask("child") { _ in 5 }
            try await context.join()
            if context.attempt == 1 { throw Offline() }
            return try context.value(of: child)
        }
        let run = try graph.start(concurrencyLimit: 1)
        #expect(try await run.value(of: parent) == 5)
        let report = try await run.report()
        #expect(report.outcome == .completed)
        #expect(report.tasks.map(\.id) == ["parent", "parent/child", "parent#2/child"])
        #expect(report.tasks.map(\.parent) == [nil, "parent", "parent"])
    }

    /// Subtasks listed under their parent in the text timeline, indented, before a task added
    /// to the run after them.
    @Test func theTimelineShowsSubtasksUnderTheirParent() async throws {
        var graph = TaskGraph()
        graph.add("parent") { context in
            try context.addSubtask("child") { _ in }
            try await context.join()
        }
        graph.add("sibling", dependsOn: ["parent"]) { _ in }
        let report = try await graph.run(concurrencyLimit: 1)
        #expect(report.tasks.map(\.id) == ["parent", "parent/child", "sibling"])
    }

    // MARK: - The parts alone

    /// A parent's later attempt starts a new list of subtasks: its join waits only for its own.
    @Test func eachAttemptHasItsOwnSubtasks() {
        var joins = GraphJoins()
        joins.added(3, by: 0, attempt: 1)
        joins.added(4, by: 0, attempt: 1)
        joins.added(7, by: 1, attempt: 1)
        #expect(joins.subtasks(of: 0, attempt: 1) == [3, 4])
        joins.added(9, by: 0, attempt: 2)
        #expect(joins.subtasks(of: 0, attempt: 2) == [9])
        #expect(joins.subtasks(of: 0, attempt: 1) == [])
        #expect(joins.subtasks(of: 1, attempt: 1) == [7])
        #expect(joins.subtasks(of: 2, attempt: 1) == [])
    }

    /// Records come in the order added; each parent's subtasks are moved right after it, depth
    /// first, and a report without subtasks keeps its order.
    @Test func recordsListSubtasksDepthFirstAfterTheirParent() {
        func record(_ id: String, _ parent: String? = nil) -> TaskRecord {
            TaskRecord(
                id: id, stage: nil, dependencies: [], outcome: .succeeded, queuedAt: nil, startedAt: nil,
                endedAt: .zero, attempts: 1, placement: "global", parent: parent)
        }
        let added = [record("a"), record("b"), record("a/x", "a"), record("b/y", "b"), record("a/x/z", "a/x")]
        let ordered = GraphNodeTable.subtasksAfterTheirParents(added)
        #expect(ordered.map(\.id) == ["a", "a/x", "a/x/z", "b", "b/y"])
        let plain = [record("c"), record("a"), record("b")]
        #expect(GraphNodeTable.subtasksAfterTheirParents(plain).map(\.id) == ["c", "a", "b"])
    }
}
