import ConductorTestKit
import Testing

@testable import ConductorCore
@testable import ConductorGraph

/// A launcher hands its queue of additions to its run numbered, and racing callers may hand
/// over the same addition: the run, not an error, says which part it holds. (Before, the
/// caller whose addition another had handed over learned it from a duplicate-id error, and
/// once the launch had ended got `launchFinished` for a task the launch held and ran.)
@Suite struct NumberedAdditionTests {
    @Test func anAdditionTheRunHoldsIsNeverRefusedAndOneItDoesNotIs() async throws {
        let keeper = Latch()
        var graph = TaskGraph()
        graph.add("keeper") { _ in await keeper.wait() }
        let run = try graph.start()
        var more = TaskGraph()
        more.add("a") { _ in }
        more.add("b", dependsOn: ["a"]) { _ in }
        more.add("c") { _ in }
        let a = GraphRunStorage.NumberedAddition(number: 0, definitions: [more.definitions[0]])
        let b = GraphRunStorage.NumberedAddition(number: 1, definitions: [more.definitions[1]])
        let c = GraphRunStorage.NumberedAddition(number: 2, definitions: [more.definitions[2]])

        // One caller hands over the queue up to its own addition, `b`: `a` goes in with it.
        try run.storage.addLeavingWakeups(numbered: [a, b], now: .zero).perform()
        // The caller that added `a` hands over its prefix after that: nothing is added twice.
        try run.storage.addLeavingWakeups(numbered: [a], now: .zero).perform()
        keeper.open()
        let report = try await run.report()
        // After the end, `a` and `b` are still in, and `c` is refused, naming it.
        try run.storage.addLeavingWakeups(numbered: [a, b], now: .zero).perform()
        let refusal = #expect(throws: GraphError.self) {
            try run.storage.addLeavingWakeups(numbered: [a, b, c], now: .zero)
        }
        #expect(refusal?.code == .runFinished)
        #expect(refusal?.taskID == "c")
        #expect(report.tasks.map(\.id) == ["keeper", "a", "b"])
        #expect(report.tasks.allSatisfy { "\($0.outcome)" == "succeeded" })
    }
}
