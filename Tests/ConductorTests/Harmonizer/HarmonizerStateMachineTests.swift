import Testing

@testable import Conductor

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
        machine.leave("avatar")
        machine.arrive("comments")
        machine.leave("nobody")
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
}
