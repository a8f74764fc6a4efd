import Conductor
import Foundation
import Logging
import Synchronization
import Testing

/// A registry's participant handle counts down without looking the name up, with the
/// guarantees of counting down by name.
@Suite struct HarmonizerParticipantTests {
    // MARK: - Counting

    @Test func handlesCompleteTheHarmonizerExactlyOnce() async throws {
        let registry = HarmonizerRegistry()
        let reports = Recorder<HarmonizerError>()
        registry.onMisuse { reports.append($0) }
        let recorder = OutcomeRecorder()
        try registry.create("page", count: 3, on: .immediate, completion: recorder.record)
        let avatar = try registry.participant(of: "page")
        let feed = try registry.participant(of: "page")
        #expect(avatar.harmonizerName == "page")
        #expect(avatar.participantName == nil)

        #expect(avatar.stash("avatar.png", as: "avatar"))
        #expect(avatar.leave())
        #expect(feed.leave())
        #expect(registry.count("page") == 1)
        #expect(recorder.received.isEmpty)
        #expect(feed.leave())
        #expect(recorder.received.count == 1)
        #expect(recorder.received.first?.stash?["avatar"] as? String == "avatar.png")
        #expect(registry.waitingNames.isEmpty, "the name is freed at zero, as by name")

        #expect(!avatar.leave())
        #expect(!feed.enter())
        #expect(recorder.received.count == 1)
        #expect(reports.all.map(\.code) == [.harmonizerEnded, .harmonizerEnded])
    }

    @Test func anExtraCountDownIsReportedToTheMisuseHook() throws {
        let registry = HarmonizerRegistry()
        let reports = Recorder<HarmonizerError>()
        registry.onMisuse { reports.append($0) }
        let recorder = OutcomeRecorder()
        try registry.create("page", count: 0, on: .immediate, completion: recorder.record)
        let page = try registry.participant(of: "page")
        #expect(!page.leave(), "nobody has arrived")
        #expect(page.enter())
        #expect(page.leave())
        #expect(recorder.received.count == 1)
        #expect(reports.all.map(\.code) == [.extraLeave])
        #expect(reports.all.first?.name == "page")
    }

    @Test func misuseThroughAHandleIsLoggedByDefault() throws {
        let handler = CapturingLogHandler()
        let registry = HarmonizerRegistry(logger: Logger(label: "test") { _ in handler })
        try registry.create("page", count: 1, on: .immediate) { _ in }
        let page = try registry.participant(of: "page")
        #expect(registry.cancel("page"))
        #expect(!page.leave())
        #expect(!page.leave())
        #expect(
            handler.lines.all.map(\.message) == [
                "leave() ignored: harmonizer 'page', which this participant was made for, has ended"
            ])
    }

    // MARK: - After the end

    @Test func aHandleIsBoundToItsHarmonizerNotToTheName() async throws {
        let registry = HarmonizerRegistry()
        let reports = Recorder<HarmonizerError>()
        registry.onMisuse { reports.append($0) }
        let first = try registry.create("page", count: 2, on: .immediate) { _ in }
        let stale = try registry.participant(of: "page")
        #expect(first.cancel())
        let second = try registry.create("page", count: 2, on: .immediate) { _ in }

        #expect(!stale.leave())
        #expect(!stale.enter())
        #expect(!stale.stash(1, as: "late"))
        #expect(second.count == 2, "the harmonizer now under the name is untouched")
        #expect(await first.outcome.isCancelled)
        #expect(reports.all.map(\.code) == [.harmonizerEnded, .harmonizerEnded, .harmonizerEnded])
        #expect(
            reports.all.map(\.message) == [
                "leave() ignored: harmonizer 'page', which this participant was made for, has ended",
                "enter() ignored: harmonizer 'page', which this participant was made for, has ended",
                "stash(as: 'late') ignored: harmonizer 'page', which this participant was made for, has ended",
            ])
        let fresh = try registry.participant(of: "page")
        #expect(fresh.leave())
        #expect(second.count == 1)
    }

    @Test func aHandleIsRefusedForANameThatIsNotWaiting() throws {
        let registry = HarmonizerRegistry()
        let never = #expect(throws: HarmonizerError.self) { try registry.participant(of: "page") }
        #expect(never?.code == .unknownName)
        try registry.create("page", count: 1, on: .immediate) { _ in }
        #expect(registry.leave("page"))
        let finished = #expect(throws: HarmonizerError.self) { try registry.participant("lead", of: "page") }
        #expect(finished?.code == .unknownName)
        #expect(finished?.name == "page")
    }

    // MARK: - Named participants

    @Test func aNamedHandleCountsDownItsParticipantOnly() async throws {
        let registry = HarmonizerRegistry()
        let reports = Recorder<HarmonizerError>()
        registry.onMisuse { reports.append($0) }
        let recorder = OutcomeRecorder()
        try registry.create(
            "sing-along", participants: ["lead", "prompt"], on: .immediate, completion: recorder.record)
        let anonymous = #expect(throws: HarmonizerError.self) { try registry.participant(of: "sing-along") }
        #expect(anonymous?.code == .anonymousParticipant)

        let lead = try registry.participant("lead", of: "sing-along")
        #expect(lead.participantName == "lead")
        #expect(lead.leave())
        #expect(!lead.leave(), "'lead' has left")
        #expect(registry.harmonizer(named: "sing-along")?.missingParticipants == ["prompt"])
        #expect(try registry.participant("prompt", of: "sing-along").leave())
        #expect(recorder.received.count == 1)
        #expect(reports.all.map(\.code) == [.absentParticipant])
    }

    // MARK: - Races

    /// Two tasks hold a handle each and race for the last count-downs, each doing a seeded
    /// number of them (some extra): exactly two count, one completes, the rest are reported.
    @Test func twoTasksRacingTheLastCountDownCompleteOnce() async throws {
        for seed in StressConfiguration.seeds(default: 300, base: 0x4A12_0020) {
            var generator = SeededGenerator(seed: seed)
            let registry = HarmonizerRegistry()
            let reports = Recorder<HarmonizerError>()
            registry.onMisuse { reports.append($0) }
            let recorder = OutcomeRecorder()
            let harmonizer = try registry.create("race", count: 2, on: .immediate, completion: recorder.record)
            let attempts = [Int.random(in: 1...3, using: &generator), Int.random(in: 1...3, using: &generator)]
            let handles = [try registry.participant(of: "race"), try registry.participant(of: "race")]

            let counted = await withTaskGroup(of: Int.self) { group in
                for index in Bool.random(using: &generator) ? [0, 1] : [1, 0] {
                    group.addTask {
                        var counted = 0
                        for _ in 0..<attempts[index] where handles[index].leave() { counted += 1 }
                        return counted
                    }
                }
                return await group.reduce(0, +)
            }

            #expect(counted == 2, "seed \(seed)")
            #expect(recorder.received.count == 1, "seed \(seed)")
            #expect(await harmonizer.outcome.isCompleted, "seed \(seed)")
            #expect(reports.all.count == attempts.reduce(0, +) - 2, "seed \(seed)")
            #expect(
                reports.all.allSatisfy { $0.code == .harmonizerEnded || $0.code == .extraLeave }, "seed \(seed)")
            #expect(registry.waitingCount == 0, "seed \(seed)")
        }
    }

    /// Two OS threads, released together by a spin barrier, race for the last count-down of a
    /// harmonizer of count 1 — through two handles, or a handle against a count-down by name:
    /// exactly one counts and the completion runs once; the other returns `false` and is
    /// reported. Plain threads rather than tasks, so that the two calls overlap on two cores
    /// (two tasks of a few calls each mostly ran one after the other on the cooperative pool).
    @Test(arguments: [false, true])
    func twoThreadsRacingTheLastCountDownCompleteOnce(oneByName: Bool) throws {
        for round in 0..<500 {
            let registry = HarmonizerRegistry()
            let reports = Recorder<HarmonizerError>()
            registry.onMisuse { reports.append($0) }
            let recorder = OutcomeRecorder()
            try registry.create("race", count: 1, on: .immediate, completion: recorder.record)
            let first = try registry.participant(of: "race")
            let second = try registry.participant(of: "race")
            let arrived = Atomic(0)
            let counted = Atomic(0)
            let finished = DispatchGroup()
            for index in 0..<2 {
                finished.enter()
                let thread = Thread {
                    arrived.add(1, ordering: .acquiringAndReleasing)
                    while arrived.load(ordering: .acquiring) < 2 {}
                    let didCount =
                        switch (index, oneByName) {
                        case (0, _): first.leave()
                        case (_, true): registry.leave("race")
                        case (_, false): second.leave()
                        }
                    if didCount { counted.add(1, ordering: .relaxed) }
                    finished.leave()
                }
                thread.start()
            }
            finished.wait()

            #expect(counted.load(ordering: .relaxed) == 1, "round \(round)")
            #expect(recorder.received.count == 1, "round \(round)")
            #expect(reports.all.count == 1, "round \(round)")
            #expect(
                reports.all.allSatisfy {
                    [HarmonizerError.Code.harmonizerEnded, .extraLeave, .unknownName].contains($0.code)
                },
                "round \(round): \(reports.all)")
            #expect(registry.waitingCount == 0, "round \(round)")
        }
    }
}
