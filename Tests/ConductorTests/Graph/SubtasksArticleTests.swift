import ConductorTestKit
import Testing

@testable import ConductorGraph

// The article's function, at the top level as the article has it.
private func fibonacci(_ n: Int, _ context: TaskContext) async throws -> Int {
    guard n > 1 else { return n }
    let left = try context.addSubtask("l") { try await fibonacci(n - 1, $0) }
    let right = try context.addSubtask("r") { try await fibonacci(n - 2, $0) }
    try await context.join()
    return try context.value(of: left) + context.value(of: right)
}

/// The example of the "Subtasks that join" section of the StagedSchedules article, as the
/// article writes it; the value and the report are what the article says.
@Suite(.timeLimit(.minutes(1))) struct SubtasksArticleTests {
    @Test func recursiveFibonacciJoinsUnderALimitOfOne() async throws {
        // The article's example.
        var recursive = TaskGraph()
        let fib = recursive.add("fib") { try await fibonacci(10, $0) }
        let recursiveRun = try recursive.start(concurrencyLimit: 1)
        let fib10 = try await recursiveRun.value(of: fib)
        // The check.
        #expect(fib10 == 55)
        let report = try await recursiveRun.report()
        #expect(report.outcome == .completed)
        #expect(report.tasks.count == 177)
        #expect(Array(report.tasks.prefix(3).map(\.id)) == ["fib", "fib/l", "fib/l/l"])
        #expect(report["fib/l/l"]?.parent == "fib/l")
    }
}
