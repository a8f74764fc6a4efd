import Testing

@testable import ConductorAssembly
@testable import ConductorCore
@testable import ConductorGate
@testable import ConductorGraph
@testable import ConductorHarmonizer
@testable import ConductorLaunch
@testable import ConductorReports

/// The counter and the state machine on their own: no tasks, no locks, no clocks.
/// (`#expect` cannot capture a noncopyable value or call a mutating method, hence the locals.)
@Suite struct HarmonizerStateMachineTests {
    // MARK: - Counter

    @Test func theCounterNeverGoesBelowZero() {
        let counter = HarmonizerCounter(0)
        let atZero = counter.decrement()
        let first = counter.increment()
        let up = counter.increment()
        let down = counter.decrement()
        let last = counter.decrement()
        let closed = counter.isClosed
        let value = counter.value
        #expect(atZero == .refusedAtZero)
        #expect(first == 1)
        #expect(up == 2)
        #expect(down == .decremented(remaining: 1))
        #expect(last == .reachedZero)
        #expect(closed)
        #expect(value == 0)
    }

    @Test func aClosedCounterRefusesEverything() {
        let counter = HarmonizerCounter(3)
        counter.close()
        let down = counter.decrement()
        let up = counter.increment()
        let value = counter.value
        #expect(down == .refusedClosed)
        #expect(up == nil)
        #expect(value == 0)
    }

    /// The counter's constants come from its word's width. watchOS on arm64_32 has a 32-bit
    /// `Int`, but this host is 64-bit only, so the real counter cannot run at 32 bits here:
    /// this checks, at both widths, the relations its rules rely on instead.
    @Test func theCounterLimitsHoldAt32And64Bits() {
        checkLimits(of: Int32.self)
        checkLimits(of: Int64.self)
        #expect(HarmonizerCounter.Limits<Int32>.maximumCount == 1 << 29)
        // At 64 bits, the values the counter always had.
        #expect(HarmonizerCounter.Limits<Int64>.closed == -(1 << 62))
        #expect(HarmonizerCounter.Limits<Int64>.closedThreshold == -(1 << 61))
        #expect(HarmonizerCounter.Limits<Int64>.maximumCount == 1 << 61)
    }

    private func checkLimits<Word: FixedWidthInteger & SignedInteger>(
        of _: Word.Type,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        typealias Limits = HarmonizerCounter.Limits<Word>
        // More counts in flight at once (one per thread) than any process will have.
        let inFlight: Word = 1 << 20
        // Live counts up to the maximum exist, and arrivals past it cannot overflow.
        #expect(Limits.maximumCount > inFlight, sourceLocation: sourceLocation)
        #expect(Limits.maximumCount <= Word.max - inFlight, sourceLocation: sourceLocation)
        // Refused count-downs at zero dip below zero without looking closed.
        #expect(Limits.closedThreshold < -inFlight, sourceLocation: sourceLocation)
        // Refused counts on a closed word stay below the threshold and above `Word.min`.
        #expect(Limits.closed <= Limits.closedThreshold - inFlight, sourceLocation: sourceLocation)
        #expect(Limits.closed >= Word.min + inFlight, sourceLocation: sourceLocation)
    }

    // MARK: - State machine

    @Test func theOutcomeIsDecidedOnce() {
        var machine = HarmonizerStateMachine(participants: [])
        let stashed = machine.stash(1, forKey: "a")
        let first = machine.decide(.completed)
        let second = machine.decide(.timedOut)
        let third = machine.decide(.cancelled)
        let late = machine.stash(2, forKey: "b")
        #expect(stashed)
        #expect(first?.outcome.stash?["a"] as? Int == 1)
        #expect(second == nil)
        #expect(third == nil)
        #expect(!late)
        #expect(machine.outcome?.isCompleted == true)
    }

    @Test func aTimeoutListsWhoIsStillPresentSortedWithRepeats() {
        var machine = HarmonizerStateMachine(participants: ["feed", "ads", "feed", "avatar"])
        _ = machine.leave("avatar", count: 3)
        _ = machine.enter("comments", count: 4)
        _ = machine.leave("nobody", count: 4)
        #expect(machine.isPresent("feed"))
        #expect(!machine.isPresent("avatar"))
        let decision = machine.decide(.timedOut)
        #expect(decision?.outcome.missing == ["ads", "comments", "feed", "feed"])
    }

    @Test func cancellingHandsTheObserversOverAndKeepsNothing() {
        var machine = HarmonizerStateMachine(participants: [])
        let observer = HarmonizerStateMachine.Observer(target: .immediate) { _ in }
        let early = machine.observe(observer)
        let stashed = machine.stash("big", forKey: "data")
        let decision = machine.decide(.cancelled)
        let late = machine.observe(observer)
        #expect(early == nil)
        #expect(stashed)
        #expect(decision?.observers.count == 1)
        #expect(decision?.outcome.stash == nil)
        #expect(late?.isCancelled == true, "a late observer gets the outcome at once")
    }

    // MARK: - Registry state

    @Test func misuseIsLoggedOncePerNameUntilTheBound() {
        var state = HarmonizerRegistryState()
        func logs(_ name: String) -> Bool {
            if case .log = state.misuse(.extraLeave(name)) { return true }
            return false
        }
        #expect(logs("a"))
        #expect(!logs("a"))
        #expect(logs("b"))
        for index in 2..<(HarmonizerRegistryState.loggedNamesLimit - 1) { _ = logs("name-\(index)") }
        let last = state.misuse(.extraLeave("last"))
        guard case .log(isLastName: true) = last else {
            Issue.record("the name that reaches the bound is logged, saying it is the last: \(last)")
            return
        }
        #expect(!logs("one-too-many"), "beyond the bound, new names are not logged")
    }

    @Test func aMisuseHandlerTakesEveryMisuse() {
        var state = HarmonizerRegistryState()
        _ = state.misuse(.extraLeave("a"))
        state.setMisuseHandler(.init(target: .immediate) { _ in })
        for _ in 0..<3 {
            guard case .handle = state.misuse(.extraLeave("a")) else {
                Issue.record("the handler hears every misuse")
                return
            }
        }
    }

    // MARK: - Journal and publication

    /// Named arrivals and departures are journaled in the transition that made them; the
    /// outcome's event ends the journal once the decider carries it out, and only then is the
    /// outcome published to the tasks awaiting it.
    @Test func theJournalRecordsNamedCountsThenTheOutcomeWhichIsPublishedLast() {
        var machine = HarmonizerStateMachine(participants: ["feed"])
        _ = machine.enter("ads", count: 2)
        _ = machine.leave("nobody", count: 2)
        _ = machine.leave("feed", count: 1)
        _ = machine.decide(.cancelled)
        _ = machine.enter("late", count: 0)
        #expect(machine.journal.snapshot.map { "\($0)" } == ["entered(ads, count: 2)", "left(feed, count: 1)"])
        #expect(machine.publishedOutcome == nil, "decided, not yet carried out")
        let readers = machine.journalOutcome()
        #expect(readers.isEmpty)
        #expect(machine.journal.isFinished)
        #expect(machine.journal.snapshot.map { "\($0)" }.last == "finished(cancelled)")
        #expect(machine.publishedOutcome == nil)
        let waiters = machine.publish()
        #expect(waiters.isEmpty)
        #expect(machine.publishedOutcome?.kind == .cancelled)
    }
}
