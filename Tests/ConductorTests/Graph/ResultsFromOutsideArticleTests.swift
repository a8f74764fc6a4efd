import ConductorTestKit
import Testing

@testable import ConductorGraph

/// The example of the "Results from outside and open runs" section of the StagedSchedules
/// article, as the article writes it; the result and the report are what the article says.
@Suite struct ResultsFromOutsideArticleTests {
    @Test func theOpenRunComputesFibonacciOneTaskAStep() async throws {
        // The article's example.
        let fibonacci = try TaskGraph().start(staysOpen: true)
        var (a, b) = (0, 1)
        for step in 0..<30 {
            let next = try fibonacci.add("fib-\(step)") { [a, b] _ in a + b }
            (a, b) = (b, try await fibonacci.value(of: next))
        }
        fibonacci.close()
        let fibonacciReport = try await fibonacci.report()
        // The check.
        #expect(a == 832_040)
        #expect(b == 1_346_269)
        #expect(fibonacciReport.outcome == .completed)
        #expect(fibonacciReport.tasks.count == 30)
        #expect(fibonacciReport.tasks.allSatisfy { $0.outcome.isSuccess })
    }
}
