import Conductor
import ConductorTestKit
import Testing

/// Errors that said something untrue before they were fixed.
@Suite struct GraphErrorRegressionTests {
    /// `reached(_:)` in a cancelled task used to throw "the run was cancelled" while the run
    /// went on undisturbed.
    @Test func cancellingAMilestoneWaiterDoesNotClaimTheRunWasCancelled() async throws {
        let latch = Latch()
        var graph = TaskGraph()
        graph.add("held") { _ in await latch.wait() }
        graph.addMilestone("firstScreen", after: ["held"])
        let run = try graph.start()
        let waiter = Task { try await run.reached("firstScreen") }
        waiter.cancel()
        let error = await #expect(throws: GraphError.self) { try await waiter.value }
        #expect(error?.code == .cancelled)
        #expect(error?.message.contains("the run was cancelled") == false)
        #expect(error?.message.contains("'firstScreen'") == true)
        latch.open()
        #expect(try await run.report().isSuccess)
        #expect(try await run.reached("firstScreen") >= .zero)
    }
}

@Suite struct HarmonizerOverflowRegressionTests {
    /// Regression: arriving at a harmonizer whose count was already `Int.max` overflowed and crashed.
    /// Counts are capped at 2^61, far beyond any real use; arrivals there are refused.
    @Test func arrivingPastIntMaxIsRefusedNotACrash() throws {
        let harmonizer = try Harmonizer(count: .max)
        let count = harmonizer.count
        #expect(harmonizer.enter() == false)
        #expect(harmonizer.count == count)
        #expect(harmonizer.leave())
    }
}
