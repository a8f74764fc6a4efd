import Conductor
import ConductorTestKit
import Testing

/// Every test here drives time with a `ManualClock`: nothing sleeps for real.
@Suite struct HarmonizerTimeoutTests {
    @Test func aTimeoutEndsItWithWhatWasStashedAndWhoIsMissing() async throws {
        let clock = ManualClock()
        let harmonizer = try Harmonizer(participants: ["avatar", "feed", "ads"], timeout: .seconds(2), clock: clock)
        harmonizer.stash("avatar.png", as: "avatar")
        harmonizer.leave("avatar")
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .milliseconds(1999))
        #expect(harmonizer.count == 2, "not yet")
        clock.advance(by: .milliseconds(1))

        let outcome = await harmonizer.outcome
        #expect(outcome.missing == ["ads", "feed"])
        #expect(outcome.stash?["avatar"] as? String == "avatar.png")
        #expect(harmonizer.count == 0)
        #expect(!harmonizer.leave("feed"), "a participant arriving after the timeout changes nothing")
    }

    /// The timeout does not wait for work that ignores cancellation: the participants here
    /// never leave, and the outcome arrives anyway.
    @Test func aTimeoutDoesNotWaitForTheWork() async throws {
        let clock = ManualClock()
        let harmonizer = try Harmonizer(count: 2, timeout: .seconds(1), clock: clock)
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(1))
        #expect(await harmonizer.outcome.missing == [], "anonymous participants are not named")
    }

    @Test func completingFirstDisarmsTheTimeout() async throws {
        let clock = ManualClock()
        let recorder = OutcomeRecorder()
        let harmonizer = try Harmonizer(count: 1, timeout: .seconds(2), clock: clock)
        harmonizer.onOutcome(on: .immediate, recorder.record)
        await clock.sleepers(atLeast: 1)
        harmonizer.leave()
        #expect(clock.sleeperCount == 0, "the timeout's sleep is cancelled as soon as the outcome is decided")
        clock.advance(by: .seconds(5))
        #expect(await harmonizer.outcome.isCompleted)
        #expect(recorder.received.count == 1)
    }

    @Test func cancellingFirstDisarmsTheTimeout() async throws {
        let clock = ManualClock()
        let harmonizer = try Harmonizer(count: 1, timeout: .seconds(2), clock: clock)
        await clock.sleepers(atLeast: 1)
        harmonizer.cancel()
        #expect(clock.sleeperCount == 0)
        #expect(await harmonizer.outcome.isCancelled)
    }

    @Test func aZeroTimeoutEndsAtOnce() async throws {
        let harmonizer = try Harmonizer(participants: ["slow"], timeout: .zero, clock: ManualClock())
        #expect(await harmonizer.outcome.missing == ["slow"])
    }

    @Test func withoutATimeoutItWaitsForever() async throws {
        let clock = ManualClock()
        let harmonizer = try Harmonizer(count: 1, clock: clock)
        #expect(clock.sleeperCount == 0, "no timeout, nothing armed")
        clock.advance(by: .seconds(3600))
        #expect(harmonizer.count == 1)
        harmonizer.leave()
        #expect(await harmonizer.outcome.isCompleted)
    }
}
