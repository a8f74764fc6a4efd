import Testing

@testable import ConductorAssembly
@testable import ConductorCore
@testable import ConductorGate
@testable import ConductorGraph
@testable import ConductorHarmonizer
@testable import ConductorLaunch
@testable import ConductorReports

/// The deadline heap and the timer's protocol on their own: no tasks, no locks, no clocks.
/// Payloads are names and timer handles are strings, so every action can be compared.
@Suite struct DeadlineStateMachineTests {
    private typealias Machine = DeadlineStateMachine<String, String>

    /// Schedules and returns the token, checking the action is `.none`.
    private func scheduleQuietly(_ machine: inout Machine, _ name: String, at seconds: Int) -> DeadlineToken {
        let (token, action) = machine.schedule(at: .seconds(seconds), name)
        #expect(action.isNone, "\(name) at \(seconds) s should not start a timer")
        return token
    }

    // MARK: - Waking and firing

    @Test func theFirstDeadlineStartsOneTimerAndLaterOnesShareIt() {
        var machine = Machine()
        let (_, first) = machine.schedule(at: .seconds(2), "a")
        #expect(first.started == Started(generation: 0, wake: .seconds(2), replacing: nil))
        let r1 = machine.attach("t0", to: 0)
        #expect(r1)
        _ = scheduleQuietly(&machine, "b", at: 5)
        _ = scheduleQuietly(&machine, "c", at: 2)
        #expect(machine.pendingCount == 3)

        let r2 = machine.timerWoke(0, now: .seconds(2))
        #expect(Step(r2) == .fire(["a", "c"]))
        let r3 = machine.timerWoke(0, now: .seconds(2))
        #expect(Step(r3) == .sleep(until: .seconds(5)))
        let r4 = machine.timerWoke(0, now: .seconds(5))
        #expect(Step(r4) == .fire(["b"]))
        let r5 = machine.timerWoke(0, now: .seconds(5))
        #expect(Step(r5) == .stop)
        #expect(!machine.hasTimer)
        #expect(machine.pendingCount == 0)
    }

    /// An owner whose deadlines come one after another (a gate's requests, issue 36) keeps its
    /// timer task when the last one is cancelled: the next deadline, no earlier than its wake,
    /// starts no task; the task stops when it wakes with nothing pending, or by `cancelAll`.
    @Test func aTimerThatKeepsIdleSleepsOnAcrossCancelledDeadlines() {
        var machine = Machine(keepsIdleTimer: true)
        let (first, started) = machine.schedule(at: .seconds(10), "a")
        #expect(started.started == Started(generation: 0, wake: .seconds(10), replacing: nil))
        let attached = machine.attach("t0", to: 0)
        #expect(attached)
        guard case .cancelled("a", stopTimer: nil) = machine.cancel(first) else {
            Issue.record("the last cancel should keep the timer")
            return
        }
        #expect(machine.hasTimer)
        #expect(machine.pendingCount == 0)
        let second = scheduleQuietly(&machine, "b", at: 11)
        _ = machine.cancel(second)
        let woke = machine.timerWoke(0, now: .seconds(10))
        #expect(Step(woke) == .stop)
        #expect(!machine.hasTimer)
        // Without the option the last cancel stops the timer at once.
        var plain = Machine()
        let (token, _) = plain.schedule(at: .seconds(10), "a")
        let plainAttached = plain.attach("t0", to: 0)
        #expect(plainAttached)
        guard case .cancelled("a", stopTimer: "t0"?) = plain.cancel(token) else {
            Issue.record("the last cancel should stop the timer")
            return
        }
        var kept = Machine(keepsIdleTimer: true)
        _ = kept.schedule(at: .seconds(10), "c")
        let keptAttached = kept.attach("t1", to: 0)
        #expect(keptAttached)
        let stopped = kept.cancelAll().stopTimer
        #expect(stopped == "t1")
    }

    /// A timer that wakes early (or spuriously) fires nothing and sleeps again.
    @Test func anEarlyWakeSleepsAgain() {
        var machine = Machine()
        _ = machine.schedule(at: .seconds(3), "a")
        let r6 = machine.timerWoke(0, now: .seconds(1))
        #expect(Step(r6) == .sleep(until: .seconds(3)))
        #expect(machine.pendingCount == 1)
    }

    @Test func aDeadlineAlreadyPastFiresAtTheFirstReport() {
        var machine = Machine()
        let (_, action) = machine.schedule(at: .zero, "now")
        #expect(action.started?.wake == .zero)
        let r7 = machine.timerWoke(0, now: .seconds(1))
        #expect(Step(r7) == .fire(["now"]))
    }

    @Test func tiesFireInTheOrderScheduled() {
        var machine = Machine()
        _ = machine.schedule(at: .seconds(1), "first")
        for name in ["second", "third", "fourth"] { _ = scheduleQuietly(&machine, name, at: 1) }
        let r8 = machine.timerWoke(0, now: .seconds(1))
        #expect(Step(r8) == .fire(["first", "second", "third", "fourth"]))
    }

    /// Deadlines scheduled in random order fire in deadline order, each exactly once.
    @Test(arguments: [1, 2, 3, 42] as [UInt64])
    func manyDeadlinesFireInOrderExactlyOnce(seed: UInt64) {
        var generator = SeededGenerator(seed: seed)
        var machine = Machine()
        var expected: [(Int, String)] = []
        var generation: UInt64 = 0
        var timers = 0
        for index in 0..<500 {
            let at = Int.random(in: 0..<100, using: &generator)
            let (_, action) = machine.schedule(at: .milliseconds(at), "\(index)")
            if let started = action.started {
                generation = started.generation
                timers += 1
            }
            expected.append((at, "\(index)"))
        }
        #expect(timers < 20, "only a deadline earlier than every other starts a timer")
        var fired: [String] = []
        var now = Duration.zero
        loop: while true {
            switch machine.timerWoke(generation, now: now) {
            case .fire(let names): fired += names
            case .sleep(let until):
                #expect(until > now)
                now = until
            case .stop: break loop
            }
        }
        // A stable sort by time: ties keep the order scheduled.
        #expect(
            fired
                == expected.enumerated().sorted { ($0.element.0, $0.offset) < ($1.element.0, $1.offset) }.map(
                    \.element.1))
    }

    // MARK: - An earlier deadline

    /// An earlier deadline than the one the timer sleeps for starts a new timer that wakes
    /// sooner and cancels the old one; the old one's reports are ignored from then on.
    @Test func anEarlierDeadlineReplacesTheSleepingTimer() {
        var machine = Machine()
        _ = machine.schedule(at: .seconds(10), "late")
        let r9 = machine.attach("t0", to: 0)
        #expect(r9)
        let (_, action) = machine.schedule(at: .seconds(1), "early")
        #expect(action.started == Started(generation: 1, wake: .seconds(1), replacing: "t0"))
        let r10 = machine.attach("t1", to: 1)
        #expect(r10)
        let r11 = machine.timerWoke(0, now: .seconds(10))
        #expect(Step(r11) == .stop, "the replaced timer does nothing")
        machine.sleepFailed(0)  // its cancelled sleep: ignored
        #expect(machine.hasTimer)
        let r12 = machine.timerWoke(1, now: .seconds(1))
        #expect(Step(r12) == .fire(["early"]))
        let r13 = machine.timerWoke(1, now: .seconds(1))
        #expect(Step(r13) == .sleep(until: .seconds(10)))
    }

    /// Replaced before the creator could hand over its task: the handle is refused, so the
    /// creator cancels that task itself.
    @Test func aTimerReplacedBeforeItsHandleArrivesIsRefused() {
        var machine = Machine()
        _ = machine.schedule(at: .seconds(10), "late")
        let (_, action) = machine.schedule(at: .seconds(1), "early")
        #expect(action.started == Started(generation: 1, wake: .seconds(1), replacing: nil))
        let r14 = machine.attach("t0", to: 0)
        #expect(!r14)
        let r15 = machine.attach("t1", to: 1)
        #expect(r15)
        let r16 = machine.attach("t1 again", to: 1)
        #expect(!r16, "a generation takes one handle")
    }

    /// While the timer is awake (firing), a new deadline — however early — starts no task:
    /// the timer reports again before it sleeps.
    @Test func aDeadlineAddedWhileFiringStartsNoTimer() {
        var machine = Machine()
        _ = machine.schedule(at: .seconds(1), "a")
        _ = scheduleQuietly(&machine, "b", at: 5)
        let r17 = machine.timerWoke(0, now: .seconds(1))
        #expect(Step(r17) == .fire(["a"]))
        _ = scheduleQuietly(&machine, "from a's callback", at: 0)
        let r18 = machine.timerWoke(0, now: .seconds(1))
        #expect(Step(r18) == .fire(["from a's callback"]))
        let r19 = machine.timerWoke(0, now: .seconds(1))
        #expect(Step(r19) == .sleep(until: .seconds(5)))
    }

    @Test func aLaterDeadlineKeepsTheTimer() {
        var machine = Machine()
        _ = machine.schedule(at: .seconds(1), "a")
        _ = scheduleQuietly(&machine, "b", at: 1)
        _ = scheduleQuietly(&machine, "c", at: 9)
    }

    // MARK: - Cancelling

    @Test func aCancelledDeadlineNeverFires() {
        var machine = Machine()
        let (a, _) = machine.schedule(at: .seconds(1), "a")
        let r20 = machine.attach("t0", to: 0)
        #expect(r20)
        _ = scheduleQuietly(&machine, "b", at: 2)
        let r21 = machine.cancel(a)
        #expect(r21.cancelled == Cancelled(payload: "a", stopTimer: nil))
        let r22 = machine.cancel(a)
        #expect(r22.isNotPending, "twice is a no-op")
        // The timer still wakes for `a`'s time (cancelled entries go lazily), fires nothing.
        let r23 = machine.timerWoke(0, now: .seconds(1))
        #expect(Step(r23) == .sleep(until: .seconds(2)))
        let r24 = machine.timerWoke(0, now: .seconds(2))
        #expect(Step(r24) == .fire(["b"]))
    }

    @Test func cancellingTheLastDeadlineStopsTheTimer() {
        var machine = Machine()
        let (a, _) = machine.schedule(at: .seconds(1), "a")
        let r25 = machine.attach("t0", to: 0)
        #expect(r25)
        let r26 = machine.cancel(a)
        #expect(r26.cancelled == Cancelled(payload: "a", stopTimer: "t0"))
        #expect(!machine.hasTimer)
        let r27 = machine.timerWoke(0, now: .seconds(1))
        #expect(Step(r27) == .stop)
        // The next deadline starts a new generation.
        let (_, action) = machine.schedule(at: .seconds(3), "b")
        #expect(action.started == Started(generation: 1, wake: .seconds(3), replacing: nil))
    }

    /// Emptied before the creator handed over its task: nothing to stop yet, and the handle
    /// is refused when it arrives.
    @Test func emptiedBeforeTheHandleArrives() {
        var machine = Machine()
        let (a, _) = machine.schedule(at: .seconds(1), "a")
        let r28 = machine.cancel(a)
        #expect(r28.cancelled == Cancelled(payload: "a", stopTimer: nil))
        let r29 = machine.attach("t0", to: 0)
        #expect(!r29)
    }

    @Test func aFiredDeadlineCannotBeCancelled() {
        var machine = Machine()
        let (a, _) = machine.schedule(at: .seconds(1), "a")
        let r30 = machine.timerWoke(0, now: .seconds(1))
        #expect(Step(r30) == .fire(["a"]))
        let r31 = machine.cancel(a)
        #expect(r31.isNotPending)
    }

    @Test func cancelAllDropsEverythingAndStopsTheTimer() {
        var machine = Machine()
        _ = machine.schedule(at: .seconds(1), "a")
        let r32 = machine.attach("t0", to: 0)
        #expect(r32)
        _ = scheduleQuietly(&machine, "b", at: 2)
        let (dropped, handle) = machine.cancelAll()
        #expect(dropped.sorted() == ["a", "b"])
        #expect(handle == "t0")
        #expect(machine.pendingCount == 0)
        let r33 = machine.timerWoke(0, now: .seconds(5))
        #expect(Step(r33) == .stop)
    }

    /// Most deadlines cancelled (timeouts that rarely fire): the heap is compacted, and the
    /// survivors still fire in order.
    @Test func mostlyCancelledDeadlinesLeaveTheRestInOrder() {
        var generator = SeededGenerator(seed: 7)
        var machine = Machine()
        var tokens: [(DeadlineToken, Int)] = []
        var generation: UInt64 = 0
        for index in 0..<1_000 {
            let at = Duration.milliseconds(Int.random(in: 1..<10_000, using: &generator))
            let (token, action) = machine.schedule(at: at, "\(index)")
            if let started = action.started { generation = started.generation }
            tokens.append((token, index))
        }
        tokens.shuffle(using: &generator)
        let kept = Set(tokens.prefix(10).map(\.1))
        for (token, _) in tokens.dropFirst(10) {
            let action = machine.cancel(token)
            #expect(action.cancelled?.stopTimer == nil)
        }
        #expect(machine.pendingCount == 10)
        var fired: [String] = []
        var now = Duration.zero
        loop: while true {
            switch machine.timerWoke(generation, now: now) {
            case .fire(let names): fired += names
            case .sleep(let until): now = until
            case .stop: break loop
            }
        }
        #expect(Set(fired) == Set(kept.map { "\($0)" }))
        #expect(fired.count == 10)
    }

    // MARK: - A failing sleep

    /// The current timer's sleep failed on its own (a clock that throws): its deadlines stay,
    /// with no timer, and the next schedule starts one for the earliest of them.
    @Test func aFailedSleepKeepsTheDeadlinesForTheNextTimer() {
        var machine = Machine()
        _ = machine.schedule(at: .seconds(2), "a")
        let r34 = machine.attach("t0", to: 0)
        #expect(r34)
        machine.sleepFailed(0)
        #expect(!machine.hasTimer)
        #expect(machine.pendingCount == 1)
        let (_, action) = machine.schedule(at: .seconds(9), "b")
        #expect(action.started == Started(generation: 1, wake: .seconds(2), replacing: nil))
        let r35 = machine.timerWoke(1, now: .seconds(9))
        #expect(Step(r35) == .fire(["a", "b"]))
    }

    @Test func aStaleTimersFailedSleepChangesNothing() {
        var machine = Machine()
        _ = machine.schedule(at: .seconds(5), "a")
        _ = machine.schedule(at: .seconds(1), "b")  // generation 1 replaces 0
        machine.sleepFailed(0)
        #expect(machine.hasTimer)
        _ = scheduleQuietly(&machine, "c", at: 3)
    }
}

// MARK: - Comparing actions

private struct Started: Equatable {
    var generation: UInt64
    var wake: Duration
    var replacing: String?
}

private struct Cancelled: Equatable {
    var payload: String
    var stopTimer: String?
}

extension DeadlineStateMachine<String, String>.ScheduleAction {
    fileprivate var isNone: Bool {
        if case .none = self { return true }
        return false
    }

    fileprivate var started: Started? {
        guard case .startTimer(let generation, let wake, let replacing) = self else { return nil }
        return Started(generation: generation, wake: wake, replacing: replacing)
    }
}

extension DeadlineStateMachine<String, String>.CancelAction {
    fileprivate var isNotPending: Bool {
        if case .notPending = self { return true }
        return false
    }

    fileprivate var cancelled: Cancelled? {
        guard case .cancelled(let payload, let stopTimer) = self else { return nil }
        return Cancelled(payload: payload, stopTimer: stopTimer)
    }
}

/// `TimerStep` as a value the tests can compare.
private enum Step: Equatable {
    case fire([String])
    case sleep(until: Duration)
    case stop

    init(_ step: DeadlineStateMachine<String, String>.TimerStep) {
        switch step {
        case .fire(let names): self = .fire(names)
        case .sleep(let until): self = .sleep(until: until)
        case .stop: self = .stop
        }
    }
}
