import Conductor
import ConductorTestKit
import Testing

private enum Keys {
    static let avatar = HarmonizerKey<String>("avatar")
    static let friends = HarmonizerKey<[String]>("friends")
}

@Suite struct HarmonizerTests {
    // MARK: - Counting

    @Test func completesWhenTheCountReachesZero() async throws {
        let harmonizer = try Harmonizer(count: 3)
        #expect(harmonizer.count == 3)
        #expect(harmonizer.leave())
        #expect(harmonizer.leave())
        #expect(harmonizer.count == 1)
        #expect(harmonizer.leave())
        #expect(harmonizer.count == 0)
        #expect(await harmonizer.outcome.isCompleted)
    }

    @Test func anExtraLeaveReturnsFalseInsteadOfCrashing() async throws {
        let harmonizer = try Harmonizer(count: 1)
        #expect(harmonizer.leave())
        #expect(!harmonizer.leave())
        #expect(!harmonizer.leave("nobody"))
        #expect(harmonizer.count == 0)
    }

    @Test func aZeroCountWaitsForTheFirstArrival() async throws {
        let recorder = OutcomeRecorder()
        let harmonizer = try Harmonizer(count: 0)
        harmonizer.onOutcome(on: .immediate, recorder.record)
        #expect(!harmonizer.leave(), "nothing to count down yet")
        #expect(recorder.received.isEmpty)
        #expect(harmonizer.enter())
        #expect(harmonizer.enter())
        #expect(harmonizer.count == 2)
        #expect(harmonizer.leave())
        #expect(recorder.received.isEmpty)
        #expect(harmonizer.leave())
        #expect(recorder.received.count == 1)
    }

    @Test func nothingCountsAfterTheOutcome() async throws {
        let harmonizer = try Harmonizer(count: 1)
        harmonizer.leave()
        #expect(!harmonizer.enter())
        #expect(!harmonizer.enter("late"))
        #expect(!harmonizer.stash(1, as: "late"))
        #expect(!harmonizer.cancel())
        #expect(harmonizer.count == 0)
        #expect(await harmonizer.outcome.isCompleted)
    }

    @Test func namedParticipantsMustArriveBeforeTheyLeave() async throws {
        let harmonizer = try Harmonizer(participants: ["avatar", "feed", "feed"])
        #expect(harmonizer.count == 3)
        #expect(!harmonizer.leave("profile"))
        #expect(harmonizer.leave("feed"))
        #expect(harmonizer.leave("feed"))
        #expect(!harmonizer.leave("feed"), "'feed' was listed twice and has left twice")
        #expect(harmonizer.enter("profile"))
        #expect(harmonizer.leave("profile"))
        #expect(harmonizer.count == 1)
        #expect(harmonizer.leave("avatar"))
        #expect(await harmonizer.outcome.isCompleted)
    }

    /// Issue 18 §4: two anonymous leaves used to complete a harmonizer of two named
    /// participants, and the named leave that followed returned `false`.
    @Test func anonymousCountsAreRefusedOnAHarmonizerOfNamedParticipants() async throws {
        let recorder = OutcomeRecorder()
        let harmonizer = try Harmonizer(participants: ["avatar", "feed"])
        harmonizer.onOutcome(on: .immediate, recorder.record)
        #expect(!harmonizer.leave())
        #expect(!harmonizer.leave())
        #expect(!harmonizer.enter(), "an anonymous arrival could only be balanced by an anonymous leave")
        #expect(harmonizer.count == 2)
        #expect(recorder.received.isEmpty)
        #expect(harmonizer.leave("avatar"))
        #expect(harmonizer.leave("feed"))
        #expect(recorder.received.count == 1)
        #expect(await harmonizer.outcome.isCompleted)
    }

    @Test func anEmptyListOfParticipantsStillWaitsForNamedOnes() async throws {
        let harmonizer = try Harmonizer(participants: [])
        #expect(!harmonizer.enter())
        #expect(harmonizer.enter("late-joiner"))
        #expect(!harmonizer.leave())
        #expect(harmonizer.count == 1)
        #expect(harmonizer.leave("late-joiner"))
        #expect(await harmonizer.outcome.isCompleted)
    }

    @Test func missingParticipantsAreTheNamedOnesStillExpected() async throws {
        let harmonizer = try Harmonizer(participants: ["feed", "avatar", "feed"])
        #expect(harmonizer.missingParticipants == ["avatar", "feed", "feed"])
        harmonizer.leave("feed")
        harmonizer.enter("banner")
        #expect(harmonizer.missingParticipants == ["avatar", "banner", "feed"])
        harmonizer.cancel()
        #expect(harmonizer.missingParticipants.isEmpty, "nobody is expected once it has ended")
        let counting = try Harmonizer(count: 2)
        #expect(counting.missingParticipants.isEmpty, "anonymous counting names nobody")
    }

    // MARK: - Data

    @Test func theOutcomeCarriesEverythingStashed() async throws {
        let harmonizer = try Harmonizer(count: 3)
        #expect(harmonizer.stash("https://cdn/avatar.png", as: Keys.avatar))
        harmonizer.leave()
        #expect(harmonizer.stash(["ann", "bo"], as: Keys.friends))
        harmonizer.leave()
        #expect(harmonizer.stash(42, as: "unread"))
        #expect(harmonizer.stash(7, as: "unread"), "a second stash under a key replaces the first")
        harmonizer.leave()

        let stash = try #require(await harmonizer.outcome.stash)
        #expect(stash.count == 3)
        #expect(stash[Keys.avatar] == "https://cdn/avatar.png")
        #expect(stash[Keys.friends] == ["ann", "bo"])
        #expect(stash["unread"] as? Int == 7)
        #expect(stash["avatar"] as? String == "https://cdn/avatar.png", "typed and string keys share names")
        #expect(stash[HarmonizerKey<Int>("avatar")] == nil, "a typed key of the wrong type reads nothing")
        #expect(Set(stash.keys) == ["avatar", "friends", "unread"])
    }

    // MARK: - Cancelling

    @Test func cancelTellsWaitersAndObserversAndReleasesTheStash() async throws {
        let recorder = OutcomeRecorder()
        let harmonizer = try Harmonizer(count: 2)
        harmonizer.onOutcome(on: .immediate, recorder.record)
        harmonizer.stash("kept until cancelled", as: "value")
        harmonizer.leave()
        #expect(harmonizer.cancel())
        #expect(!harmonizer.cancel())
        #expect(!harmonizer.leave(), "the last leave comes too late")
        #expect(harmonizer.count == 0)
        let outcome = await harmonizer.outcome
        #expect(outcome.isCancelled)
        #expect(outcome.stash == nil)
        #expect(recorder.received.count == 1)
    }

    @Test func cancellingTheWaitingTaskCancelsTheHarmonizer() async throws {
        let harmonizer = try Harmonizer(count: 1)
        let events = harmonizer.events
        let waiter = Task { await harmonizer.outcome }
        waiter.cancel()
        #expect(await waiter.value.isCancelled)
        #expect(!harmonizer.leave())
        var finished: [String] = []
        for await event in events { finished.append("\(event)") }
        #expect(finished == ["finished(cancelled)"])
    }

    // MARK: - Observing

    @Test func anObserverAddedLateHearsTheOutcomeOnce() async throws {
        let harmonizer = try Harmonizer(count: 1)
        harmonizer.leave()
        let recorder = OutcomeRecorder()
        harmonizer.onOutcome(on: .immediate, recorder.record)
        #expect(recorder.received.count == 1)
        #expect(recorder.received.first?.isCompleted == true)
    }

    @Test func observersRunOnTheirTarget() async throws {
        let recorder = OutcomeRecorder()
        let harmonizer = try Harmonizer(count: 1)
        harmonizer.onOutcome(on: .mainActor) { outcome in
            MainActor.assertIsolated()
            recorder.record(outcome)
        }
        harmonizer.leave()
        #expect(await recorder.next()?.isCompleted == true)
    }

    @Test func eventsJournalNamedParticipantsAndTheOutcome() async throws {
        let harmonizer = try Harmonizer(count: 1)
        harmonizer.enter("feed")
        harmonizer.enter()
        harmonizer.leave("feed")
        harmonizer.leave()
        harmonizer.leave()
        var events: [String] = []
        for await event in harmonizer.events { events.append("\(event)") }
        #expect(
            events == ["entered(feed, count: 2)", "left(feed, count: 2)", "finished(completed(0 stashed))"]
        )
    }

    // MARK: - Misuse

    @Test func aNegativeCountOrTimeoutIsATypedError() throws {
        let count = #expect(throws: HarmonizerError.self) { try Harmonizer(count: -1) }
        #expect(count?.code == .negativeCount)
        #expect(count?.message == "a harmonizer was given a negative initial count (-1)")
        let timeout = #expect(throws: HarmonizerError.self) {
            try Harmonizer(participants: ["a"], timeout: .seconds(-1))
        }
        #expect(timeout?.code == .negativeTimeout)
    }
}
