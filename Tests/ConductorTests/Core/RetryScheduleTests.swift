import Testing

@testable import ConductorAssembly
@testable import ConductorCore
@testable import ConductorGate
@testable import ConductorGraph
@testable import ConductorHarmonizer
@testable import ConductorLaunch
@testable import ConductorReports

/// The one retry schedule: exponential, capped, with a replayable jitter in [0.5, 1).
@Suite struct RetryScheduleTests {
    @Test func growsByItsMultiplierUpToTheCap() {
        let schedule = RetrySchedule(initial: .milliseconds(100), multiplier: 3, maximum: .seconds(1))
        let delays = (1...5).map { schedule.delay(afterAttempt: $0) }
        #expect(delays == [.milliseconds(100), .milliseconds(300), .milliseconds(900), .seconds(1), .seconds(1)])
        // An attempt number below 1 counts as the first; a huge one stops at the cap.
        #expect(schedule.delay(afterAttempt: 0) == .milliseconds(100))
        #expect(schedule.delay(afterAttempt: 10_000) == .seconds(1))
    }

    @Test func aMultiplierBelowOneNeverShrinksTheWait() {
        let schedule = RetrySchedule(initial: .milliseconds(100), multiplier: 0, maximum: .seconds(1))
        #expect(schedule.delay(afterAttempt: 4) == .milliseconds(100))
    }

    @Test func jitterScalesIntoTheLowerHalfAndReplaysFromItsSeed() {
        let schedule = RetrySchedule(initial: .milliseconds(100), maximum: .seconds(1))
        var first = SplitMix64(seed: 42)
        var second = SplitMix64(seed: 42)
        for attempt in 1...20 {
            let delay = schedule.delay(afterAttempt: attempt, jitter: &first)
            let plain = schedule.delay(afterAttempt: attempt)
            #expect(delay >= plain / 2 && delay < plain)
            #expect(delay == schedule.delay(afterAttempt: attempt, jitter: &second))
        }
    }
}
