import Conductor
import ConductorTestKit
import Logging
import Synchronization
import Testing

/// The seed's six calls on a registry of named harmonizers.
@Suite struct HarmonizerRegistryTests {
    // MARK: - create (the seed's addTask)

    @Test func createRunsTheCompletionOnTheMainActorByDefault() async throws {
        let registry = HarmonizerRegistry()
        let recorder = OutcomeRecorder()
        try registry.create("feed", count: 1) { outcome in
            MainActor.assertIsolated()
            recorder.record(outcome)
        }
        #expect(registry.leave("feed"))
        #expect(await recorder.next()?.isCompleted == true)
    }

    @Test func aNameCannotBeTakenTwiceWhileWaiting() async throws {
        let registry = HarmonizerRegistry()
        try registry.create("feed", count: 1, on: .immediate) { _ in }
        let error = #expect(throws: HarmonizerError.self) {
            try registry.create("feed", count: 2, on: .immediate) { _ in }
        }
        #expect(error?.code == .duplicateName)
        #expect(error?.message == "a harmonizer named 'feed' is still waiting")
        #expect(registry.count("feed") == 1, "the first one is untouched")
    }

    @Test func theNameIsFreeAgainInsideTheCompletion() async throws {
        let registry = HarmonizerRegistry()
        let recreated = Lock(false)
        try registry.create("feed", count: 1, on: .immediate) { _ in
            let again = try? registry.create("feed", count: 5, on: .immediate) { _ in }
            recreated.withLock { $0 = again != nil }
        }
        registry.leave("feed")
        #expect(recreated.withLock { $0 })
        #expect(registry.count("feed") == 5)
    }

    @Test func badArgumentsAreTypedErrors() throws {
        let registry = HarmonizerRegistry()
        let empty = #expect(throws: HarmonizerError.self) { try registry.create("", count: 1) { _ in } }
        #expect(empty?.code == .emptyName)
        let negative = #expect(throws: HarmonizerError.self) { try registry.create("feed", count: -2) { _ in } }
        #expect(negative?.message == "harmonizer 'feed' was given a negative initial count (-2)")
        #expect(registry.harmonizer(named: "feed") == nil)
    }

    // MARK: - countUp, countDown, count (the seed's getCounter)

    @Test func countUpAndDownMoveTheCounter() async throws {
        let registry = HarmonizerRegistry()
        let recorder = OutcomeRecorder()
        try registry.create("feed", count: 0, on: .immediate, completion: recorder.record)
        #expect(registry.enter("feed"))
        #expect(registry.enter("feed"))
        #expect(registry.count("feed") == 2)
        #expect(registry.leave("feed"))
        #expect(registry.count("feed") == 1)
        #expect(recorder.received.isEmpty)
        #expect(registry.leave("feed"))
        #expect(recorder.received.count == 1)
        #expect(registry.count("feed") == 0)
        #expect(registry.harmonizer(named: "feed") == nil, "the entry is removed at zero")
    }

    @Test func extraLateAndUnknownCountDownsAreReportedNotCrashes() async throws {
        let registry = HarmonizerRegistry()
        let reports = Lock<[HarmonizerError]>([])
        registry.onMisuse { error in reports.withLock { $0.append(error) } }
        try registry.create("zero", count: 0, on: .immediate) { _ in }
        try registry.create("named", participants: ["avatar"], on: .immediate) { _ in }
        try registry.create("once", count: 1, on: .immediate) { _ in }

        #expect(!registry.leave("zero"))
        #expect(!registry.leave("named", participant: "feed"))
        #expect(registry.leave("once"))
        #expect(!registry.leave("once"))
        #expect(!registry.leave("never-created"))
        #expect(!registry.enter("never-created"))
        #expect(!registry.stash(1, as: "x", in: "once"))

        let codes = reports.withLock { $0.map(\.code) }
        #expect(codes == [.extraLeave, .absentParticipant, .unknownName, .unknownName, .unknownName, .unknownName])
        #expect(
            reports.withLock { $0[3].message }
                == "leave('never-created') ignored: no harmonizer named 'never-created' is waiting")
        #expect(registry.count("zero") == 0)
    }

    /// Issue 18 §4, through the registry: a count-down or count-up without a participant on a
    /// harmonizer of named participants is refused, reported, and never counted.
    @Test func anAnonymousCountOnANamedHarmonizerIsReportedNotCounted() async throws {
        let registry = HarmonizerRegistry()
        let reports = Recorder<HarmonizerError>()
        registry.onMisuse { reports.append($0) }
        let recorder = OutcomeRecorder()
        try registry.create("page", participants: ["avatar", "feed"], on: .immediate, completion: recorder.record)
        #expect(!registry.leave("page"))
        #expect(!registry.leave("page"))
        #expect(!registry.enter("page"))
        #expect(registry.count("page") == 2)
        #expect(recorder.received.isEmpty)
        #expect(reports.all.map(\.code) == [.anonymousParticipant, .anonymousParticipant, .anonymousParticipant])
        #expect(reports.all.allSatisfy { $0.name == "page" })
        #expect(registry.leave("page", participant: "avatar"))
        #expect(registry.leave("page", participant: "feed"))
        #expect(recorder.received.count == 1)
    }

    // MARK: - Inspection

    @Test func waitingNamesListsTheHarmonizersStillWaitingSorted() async throws {
        let clock = ManualClock()
        let registry = HarmonizerRegistry(clock: clock)
        #expect(registry.waitingNames.isEmpty)
        #expect(registry.waitingCount == 0)
        try registry.create("sing-along", participants: ["lead", "prompt"], on: .immediate) { _ in }
        try registry.create("avatar", count: 1, on: .immediate) { _ in }
        try registry.create("feed", count: 1, timeout: .seconds(1), on: .immediate) { _ in }
        try registry.create("banner", count: 1, on: .immediate) { _ in }
        #expect(registry.waitingNames == ["avatar", "banner", "feed", "sing-along"])
        #expect(registry.waitingCount == 4)

        registry.leave("avatar")
        registry.cancel("banner")
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(1))
        _ = await registry.harmonizer(named: "feed")?.outcome
        #expect(registry.waitingNames == ["sing-along"], "completed, cancelled and timed out are gone")
        #expect(registry.waitingCount == 1)
        registry.leave("sing-along", participant: "prompt")
        #expect(registry.harmonizer(named: "sing-along")?.missingParticipants == ["lead"])
    }

    // MARK: - stash

    @Test func theCompletionReceivesEverythingStashed() async throws {
        let registry = HarmonizerRegistry()
        let recorder = OutcomeRecorder()
        let unread = HarmonizerKey<Int>("unread")
        try registry.create("inbox", count: 2, on: .immediate, completion: recorder.record)
        #expect(registry.stash(["a", "b"], as: "messages", in: "inbox"))
        #expect(registry.stash(3, as: unread, in: "inbox"))
        registry.leave("inbox")
        registry.leave("inbox")
        let stash = try #require(recorder.received.first?.stash)
        #expect(stash["messages"] as? [String] == ["a", "b"])
        #expect(stash[unread] == 3)
    }

    // MARK: - cancel

    @Test func cancelDropsTheCompletionAndTellsWaiters() async throws {
        let log = CapturingLogHandler()
        let registry = HarmonizerRegistry(logger: Logger(label: "test") { _ in log })
        let recorder = OutcomeRecorder()
        let harmonizer = try registry.create("page", count: 2, on: .immediate, completion: recorder.record)
        registry.stash("data", as: "key", in: "page")
        #expect(registry.cancel("page"))
        #expect(!registry.cancel("page"), "cancelling a name that is gone is a no-op")
        #expect(!registry.cancel("never-created"))
        #expect(!registry.leave("page"))
        #expect(await harmonizer.outcome.isCancelled)
        #expect(recorder.received.isEmpty, "the completion is dropped, never called")
        #expect(registry.harmonizer(named: "page") == nil)
        #expect(log.lines.all.map(\.message) == ["leave('page') ignored: no harmonizer named 'page' is waiting"])
    }

    // MARK: - timeout

    @Test func aTimeoutFiresTheCompletionWithWhatWasStashed() async throws {
        let clock = ManualClock()
        let log = CapturingLogHandler()
        let registry = HarmonizerRegistry(clock: clock, logger: Logger(label: "test") { _ in log })
        let recorder = OutcomeRecorder()
        try registry.create("page", participants: ["a", "b"], timeout: .seconds(2), on: .immediate) { outcome in
            recorder.record(outcome)
        }
        registry.stash(1, as: "a", in: "page")
        registry.leave("page", participant: "a")
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(2))
        let outcome = try #require(await recorder.next())
        #expect(outcome.missing == ["b"])
        #expect(outcome.stash?["a"] as? Int == 1)
        #expect(registry.harmonizer(named: "page") == nil)
        #expect(!registry.leave("page", participant: "b"))
        #expect(log.lines.all.map(\.message) == ["leave('page') ignored: no harmonizer named 'page' is waiting"])
    }

    /// Every harmonizer of a registry times out on the registry's one timer: one sleeper
    /// however many wait, each timeout on time, and no sleeper once they have all ended.
    @Test func harmonizersShareTheRegistrysTimer() async throws {
        let clock = ManualClock()
        let registry = HarmonizerRegistry(clock: clock)
        let recorder = OutcomeRecorder()
        // Tells the driver below to look again: the last outcome leaves nobody asleep.
        let record: @Sendable (Harmonizer.Outcome) -> Void = { outcome in
            recorder.record(outcome)
            clock.stateChanged()
        }
        for index in 0..<10 {
            try registry.create("h\(index)", count: 1, timeout: .seconds(index + 1), on: .immediate, completion: record)
        }
        await clock.sleepers(atLeast: 1)
        #expect(clock.sleeperCount == 1)
        for index in stride(from: 0, to: 10, by: 2) { #expect(registry.leave("h\(index)")) }
        #expect(recorder.received.filter(\.isCompleted).count == 5)
        let done = try await clock.advance(by: .seconds(1)) { recorder.received.count == 10 }
        #expect(done)
        #expect(recorder.received.compactMap(\.missing).count == 5)
        #expect(clock.now == .init(offset: .seconds(10)), "the last timeout fired at its time")
        #expect(clock.sleeperCount == 0)
        // The timer starts again for the next harmonizer.
        try registry.create("again", count: 1, timeout: .seconds(1), on: .immediate, completion: record)
        let done2 = try await clock.advance(by: .seconds(1)) { recorder.received.count == 11 }
        #expect(done2)
    }
}
