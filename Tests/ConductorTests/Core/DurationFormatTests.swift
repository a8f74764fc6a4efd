import ConductorTestKit
import Testing

@testable import ConductorCore
@testable import ConductorGate
@testable import ConductorGraph
@testable import ConductorHarmonizer
@testable import ConductorLaunch

/// One time format in every printed value (issue #34): descriptions, error messages and text
/// reports print `493.4 ms`, never `Duration`'s own `0.4934 seconds`.
@Suite struct DurationFormatTests {
    @Test(arguments: [
        (Duration.zero, "0 µs"),
        (.nanoseconds(400), "400 ns"),
        (.microseconds(850), "850 µs"),
        (.microseconds(12_500), "12.5 ms"),
        (.microseconds(493_400), "493.4 ms"),
        (.milliseconds(1_250), "1.25 s"),
        (.seconds(-2), "-2.00 s"),
        (.milliseconds(-5), "-5 ms"),
        (.nanoseconds(-1), "-1 ns"),
    ])
    func theFormat(duration: Duration, text: String) {
        #expect(duration.shortDescription == text)
    }

    @Test func descriptionsUseIt() {
        let at = Duration.microseconds(493_400)
        struct Offline: Error, CustomStringConvertible { var description: String { "offline" } }
        #expect(
            "\(GraphEvent.taskRetried("sku", attempt: 1, error: Offline(), delay: .milliseconds(200), at: at))"
                == "493.4 ms sku attempt 1 failed (offline); retrying in 200 ms")
        #expect("\(GraphEvent.taskTimedOut("sku", at: .seconds(2)))" == "2.00 s sku timed out")
        #expect("\(TaskOutcome.timedOut(after: .milliseconds(1_500)))" == "timed out after 1.50 s")
        #expect("\(LaunchReadiness.ready(at: at))" == "ready at 493.4 ms")
        #expect("\(LaunchReadiness.timedOut(after: .seconds(2)))" == "timed out after 2.00 s")
        #expect("\(UndoOutcome.timedOut(after: .seconds(5)))" == "timed out after 5.00 s")
        #expect(
            "\(GateEvent.retry(request: 3, attempt: 1, delay: .milliseconds(250)))"
                == "#3 retry after attempt 1 in 250 ms")
        #expect(
            "\(GateEvent.refreshWindowExceeded(refreshes: 5, period: .seconds(30)))"
                == "refresh refused: 5 within 30.00 s")
        #expect("\(RequestRetryPolicy.RetryAfter.honoured(upTo: .seconds(120)))" == "honoured up to 120.00 s")
        let clock = ManualClock()
        #expect("\(clock.now.advanced(by: at))" == "493.4 ms")
    }

    @Test func errorMessagesUseIt() throws {
        #expect(GraphError.timedOut("sku", after: .milliseconds(2_500)).message == "task 'sku' timed out after 2.50 s")
        #expect(
            GraphError.negativeDuration("timeout", .milliseconds(-300), task: "sku").message
                == "task 'sku' has a negative timeout (-300 ms)")
        #expect(
            GateError.timedOut("GET /feed", after: .microseconds(493_400)).message
                == "GET /feed timed out after 493.4 ms")
        #expect(
            LaunchError.notStarted("app", waitingFor: "firstScreen", after: .seconds(1)).message
                == "the wait for 'firstScreen' timed out after 1.00 s: launcher 'app' has not been started")
        let error = #expect(throws: HarmonizerError.self) { try Harmonizer(count: 1, timeout: .milliseconds(-1)) }
        #expect(error?.message == "a harmonizer was given a negative timeout (-1 ms)")
    }
}
