import Testing

@testable import ConductorAssembly
@testable import ConductorCore
@testable import ConductorGate
@testable import ConductorGraph
@testable import ConductorHarmonizer
@testable import ConductorLaunch
@testable import ConductorReports

/// The gate's request table and slots, without any concurrency: callers, waiters and tasks are
/// strings, time is a number. The credential's own decisions are `GateCredentialMachineTests`'.
@Suite struct GateStateMachineTests {
    enum Handles: GateHandles {
        typealias Credential = String
        typealias Parked = String
        typealias Caller = String
        typealias SlotWaiter = String
        typealias Work = String
    }

    typealias Machine = GateStateMachine<Handles>

    static func machine(_ credential: String? = "t1", limit: Int? = nil) -> Machine {
        Machine(
            credentials: Machine.Credentials(
                credential: credential, refreshWindow: nil, jitterSeed: 1),
            slots: SchedulerStateMachine(limit: limit, agingThreshold: 100))
    }

    static let key = GateFlightKey.coalesced("k")
    static let schedule = RetrySchedule(initial: .milliseconds(100), maximum: .seconds(1))

    /// Opens request `id`'s own flight (an attempt queues for a slot only while its flight is open).
    static func openOwn(_ machine: inout Machine, request id: UInt64, events: inout [GateEvent]) {
        guard
            case .opened = machine.open(
                .request(id), request: id, name: "GET /\(id)", priority: .default, needsAuthorization: true,
                callerID: 1_000 + id, caller: "c\(id)", work: "w\(id)", events: &events)
        else {
            Issue.record("expected a new flight for request \(id)")
            return
        }
    }

    /// A caller opens the flight, the next one with the same key joins it.
    static func openTwo(_ machine: inout Machine, events: inout [GateEvent]) {
        guard
            case .opened = machine.open(
                key, request: 0, name: "GET /a", priority: .default, needsAuthorization: true, callerID: 10,
                caller: "c0", work: "task0", events: &events)
        else {
            Issue.record("expected a new flight")
            return
        }
        guard
            case .joined = machine.open(
                key, request: 1, name: "GET /a", priority: .high, needsAuthorization: true, callerID: 11,
                caller: "c1", work: "task1", events: &events)
        else {
            Issue.record("expected to join the flight")
            return
        }
    }

    // MARK: - Flights

    @Test func aCallerWithTheSameKeyJoinsTheFlightInTheAir() {
        var machine = Self.machine()
        var events: [GateEvent] = []
        Self.openTwo(&machine, events: &events)
        #expect(events == [.initial(request: 0, name: "GET /a", priority: .default), .coalesced(name: "GET /a")])
        #expect(machine.flights.count == 1)
        events = []
        let settled = machine.settle(Self.key, request: 0, end: .success(request: 0, status: 200), events: &events)
        #expect(settled?.callers.map(\.caller) == ["c0", "c1"])
        #expect(events == [.success(request: 0, status: 200)])
        #expect(machine.flights.count == 0)
    }

    /// The last caller to leave ends the flight as cancelled, once: its settling later finds
    /// nothing and records nothing, so what the callers saw and what the journal says agree.
    @Test func theLastCallerToLeaveEndsTheFlight() {
        var machine = Self.machine()
        var events: [GateEvent] = []
        Self.openTwo(&machine, events: &events)
        events = []
        guard case .left("c1") = machine.leave(Self.key, caller: 11, events: &events) else {
            Issue.record("expected the caller to leave")
            return
        }
        #expect(events.isEmpty)
        guard case .ended("c0", let flight) = machine.leave(Self.key, caller: 10, events: &events),
            flight.work == "task0"
        else {
            Issue.record("expected the flight to end")
            return
        }
        #expect(events == [.failure(request: 0, code: .cancelled)])
        guard case .gone = machine.leave(Self.key, caller: 10, events: &events) else {
            Issue.record("expected nothing left")
            return
        }
        events = []
        let settled = machine.settle(Self.key, request: 0, end: .success(request: 0, status: 200), events: &events)
        #expect(settled == nil)
        #expect(events.isEmpty)
    }

    /// The flight table is the one home of a flight's openness: a flight ends exactly once, and
    /// only if it opened — by its own end or by its last caller leaving, whichever comes first.
    @Test func aFlightEndsOnceAndOnlyIfItOpened() {
        var table = FlightTable<GateFlightKey, String, String>()
        #expect(table.end(.request(1), request: 1) == nil)
        table.open(.request(1), request: 1, callerID: 10, caller: "c1", priority: .default, work: "w1")
        #expect(table.end(.request(1), request: 1)?.work == "w1")
        #expect(table.end(.request(1), request: 1) == nil)
        table.open(.request(2), request: 2, callerID: 20, caller: "c2", priority: .default, work: "w2")
        guard case .ended("c2", let flight) = table.leave(.request(2), caller: 20), flight.request == 2 else {
            Issue.record("expected the last caller's leaving to end the flight")
            return
        }
        #expect(table.end(.request(2), request: 2) == nil)
        // A key reused by a later flight is not an earlier request's.
        table.open(.coalesced("k"), request: 3, callerID: 30, caller: "c3", priority: .default, work: "w3")
        #expect(table.end(.coalesced("k"), request: 2) == nil)
        #expect(table.count == 1)
    }

    /// A caller who joins with a higher priority moves the flight's queued attempt to its lane.
    @Test func aJoiningCallerRaisesTheQueuedAttempt() {
        var machine = Self.machine(limit: 1)
        var events: [GateEvent] = []
        guard case .granted = machine.takeSlotNow(for: .refresh, isCancelled: false, judges: false, events: &events)
        else {
            Issue.record("expected the slot")
            return
        }
        guard
            case .opened = machine.open(
                Self.key, request: 0, name: "GET /a", priority: .low, needsAuthorization: true, callerID: 10,
                caller: "c0", work: "task0", events: &events)
        else {
            Issue.record("expected a new flight")
            return
        }
        let claimant = Machine.SlotClaimant.attempt(key: Self.key, request: 0, number: 1, needsAuthorization: true)
        guard
            case .enqueued(let slot) = machine.queue(
                claimant, id: 50, waiter: "slot0", judges: false, events: &events)
        else {
            Issue.record("expected the attempt to queue")
            return
        }
        #expect(slot.priority == .low)
        #expect(machine.slots.queuedCount(in: .low) == 1)
        _ = machine.open(
            Self.key, request: 1, name: "GET /a", priority: .unique, needsAuthorization: true, callerID: 11,
            caller: "c1", work: "task1", events: &events)
        // Capped at high: a caller's priority is a lane, never the unique barrier.
        #expect(machine.slots.queuedCount(in: .high) == 1)
        #expect(machine.slots.queuedCount(in: .low) == 0)
        #expect(machine.releaseSlot(.unique, events: &events).map(\.waiter) == ["slot0"])
    }

    @Test func afterShutdownNothingOpens() {
        var machine = Self.machine()
        var events: [GateEvent] = []
        _ = machine.replace(.shutdown, events: &events)
        guard
            case .refused(.shutDown) = machine.open(
                Self.key, request: 0, name: "GET /a", priority: .default, needsAuthorization: false, callerID: 10,
                caller: "c0", work: "task0", events: &events)
        else {
            Issue.record("expected a refusal")
            return
        }
        #expect(machine.flights.count == 0)
        #expect(events.isEmpty)
    }

    /// A shutdown ends every flight once, journaling each end before its callers wake, and
    /// drops every queued slot; a second shutdown finds nothing.
    @Test func aShutdownEndsEveryFlightOnce() {
        var machine = Self.machine(limit: 1)
        var events: [GateEvent] = []
        Self.openTwo(&machine, events: &events)
        _ = machine.open(
            .request(2), request: 2, name: "GET /b", priority: .default, needsAuthorization: true, callerID: 12,
            caller: "c2", work: "task2", events: &events)
        _ = machine.takeSlotNow(
            for: .attempt(key: Self.key, request: 0, number: 1, needsAuthorization: true), isCancelled: false,
            judges: false, events: &events)
        _ = machine.queue(
            .attempt(key: .request(2), request: 2, number: 1, needsAuthorization: true), id: 60, waiter: "slot2",
            judges: false, events: &events)
        events = []
        let step = machine.replace(.shutdown, events: &events)
        let ended = step.flights
        #expect(step.finishesJournal && step.failure == .shutDown)
        #expect(Set(ended.callers) == ["c0", "c1", "c2"])
        #expect(Set(ended.work) == ["task0", "task2"])
        #expect(ended.droppedSlots == ["slot2"])
        #expect(Set(events) == [.failure(request: 0, code: .shutDown), .failure(request: 2, code: .shutDown)])
        events = []
        let again = machine.replace(.shutdown, events: &events)
        #expect(!again.finishesJournal && again.parked.isEmpty && events.isEmpty)
        #expect(again.flights.callers.isEmpty && again.flights.work.isEmpty && again.flights.droppedSlots.isEmpty)
    }

    // MARK: - Slots and the first look

    /// A slot free at once is taken with the first look in the same transition, which records
    /// the send; a second attempt finds no slot and queues, and starts when the first gives
    /// its slot back, with its first look taken in that transition: it is resumed once, knowing
    /// it sends, with its `running` recorded there.
    @Test func aFreeSlotIsTakenWithTheFirstLook() {
        var machine = Self.machine(limit: 1)
        var events: [GateEvent] = []
        let first = Machine.SlotClaimant.attempt(key: .request(0), request: 0, number: 1, needsAuthorization: true)
        guard
            case .granted(let slot) = machine.takeSlotNow(
                for: first, isCancelled: false, judges: false, events: &events),
            case .send("t1", 1)? = slot.decision
        else {
            Issue.record("expected a send with t1")
            return
        }
        #expect(events == [.running(request: 0, attempt: 1, credentialVersion: 1)])
        Self.openOwn(&machine, request: 1, events: &events)
        events = []
        let second = Machine.SlotClaimant.attempt(key: .request(1), request: 1, number: 1, needsAuthorization: false)
        guard case .busy = machine.takeSlotNow(for: second, isCancelled: false, judges: false, events: &events) else {
            Issue.record("expected no free slot")
            return
        }
        guard case .enqueued = machine.queue(second, id: 70, waiter: "slot1", judges: false, events: &events) else {
            Issue.record("expected the attempt to queue")
            return
        }
        events = []
        let started = machine.releaseSlot(slot.priority, events: &events)
        // No authorization needed: sent without a credential, as version 0.
        guard started.count == 1, started[0].waiter == "slot1", case .send(nil, _)? = started[0].slot.decision else {
            Issue.record("expected the queued attempt to start with a send without a credential, got \(started)")
            return
        }
        #expect(events == [.running(request: 1, attempt: 1, credentialVersion: 0)])
    }

    /// An attempt queues only while its flight is open: one whose flight ended early (its last
    /// caller left, its deadline passed) is answered at once, and the transition that ends a
    /// flight early takes its queued entry out — so the attempt's task needs no cancellation
    /// handler, and no slot is ever given to an attempt nobody waits for.
    @Test func aFlightThatEndsEarlyTakesItsQueuedSlotOut() {
        var machine = Self.machine(limit: 1)
        var events: [GateEvent] = []
        guard case .granted = machine.takeSlotNow(for: .refresh, isCancelled: false, judges: false, events: &events)
        else {
            Issue.record("expected the slot")
            return
        }
        let attempt = { (id: UInt64) in
            Machine.SlotClaimant.attempt(key: .request(id), request: id, number: 1, needsAuthorization: true)
        }
        // Never opened (or ended already): nothing queues.
        guard case .flightEnded = machine.queue(attempt(5), id: 55, waiter: "s5", judges: false, events: &events)
        else {
            Issue.record("expected no queueing for a flight that is not open")
            return
        }
        #expect(machine.slots.queuedCount == 0 && events.isEmpty)
        // Its last caller leaves: the flight ends, and its queued entry goes with it.
        Self.openOwn(&machine, request: 1, events: &events)
        Self.openOwn(&machine, request: 2, events: &events)
        for id: UInt64 in [1, 2] {
            guard
                case .enqueued = machine.queue(
                    attempt(id), id: 50 + id, waiter: "s\(id)", judges: false, events: &events)
            else {
                Issue.record("expected attempt \(id) to queue")
                return
            }
        }
        guard case .ended(_, let left) = machine.leave(.request(1), caller: 1_001, events: &events) else {
            Issue.record("expected the flight to end")
            return
        }
        let dropped = machine.abandonWaits(of: left, events: &events)
        #expect(dropped.slot == "s1" && dropped.parked == nil && dropped.started.isEmpty)
        #expect(machine.slots.queuedCount == 1)
        // Settled from outside its task (its deadline): the same.
        events = []
        guard
            let settled = machine.settle(
                .request(2), request: 2, end: .failure(request: 2, code: .timedOut), events: &events)
        else {
            Issue.record("expected the flight to settle")
            return
        }
        #expect(machine.abandonWaits(of: settled, events: &events).slot == "s2")
        #expect(machine.slots.queuedCount == 0)
        #expect(machine.abandonWaits(of: settled, events: &events).slot == nil)
        #expect(machine.releaseSlot(.unique, events: &events).isEmpty)
        #expect(events == [.failure(request: 2, code: .timedOut)])
    }

    /// A request parked behind the refresh whose flight ends early is taken out in the same
    /// transition: the refresh's end wakes only those still waiting.
    @Test func aFlightThatEndsEarlyTakesItsParkedRequestOut() {
        var machine = Self.machine("t1")
        var events: [GateEvent] = []
        guard let (flight, _) = machine.refreshNow(caller: 9, waiter: "r9", now: .zero, events: &events).refresh else {
            Issue.record("expected a refresh")
            return
        }
        Self.openOwn(&machine, request: 3, events: &events)
        let claimant = Machine.SlotClaimant.attempt(key: .request(3), request: 3, number: 1, needsAuthorization: true)
        guard
            case .granted(let slot) = machine.takeSlotNow(
                for: claimant, isCancelled: false, judges: false, events: &events),
            case .park? = slot.decision,
            machine.park(
                .request(3), request: 3, attempt: 1, epoch: slot.epoch, needsAuthorization: true, slot: slot.priority,
                waiter: "p3", now: .zero, events: &events
            ).resumption == nil
        else {
            Issue.record("expected the request to park behind the refresh")
            return
        }
        guard case .ended(_, let left) = machine.leave(.request(3), caller: 1_003, events: &events) else {
            Issue.record("expected the flight to end")
            return
        }
        let abandoned = machine.abandonWaits(of: left, events: &events)
        #expect(abandoned.parked == "p3" && abandoned.slot == nil)
        let ended = machine.refreshEnded(flight, .succeeded("t2"), releasingSlot: false, events: &events)
        #expect(ended.waiters.map(\.waiter) == ["r9"])
    }

    /// The look asks for the judge's verdict on the version it would send, then acts on it;
    /// a cancelled request and a refreshing gate never send.
    @Test func theLookJudgesParksAndSeesCancellation() {
        var machine = Self.machine()
        var events: [GateEvent] = []
        func look(judged: (version: Int, stale: Bool)?, cancelled: Bool = false) -> Machine.AttemptDecision {
            machine.decide(
                request: 0, attempt: 1, epoch: 0, needsAuthorization: true, isCancelled: cancelled, judges: true,
                judged: judged, events: &events)
        }
        guard case .judge("t1", 1) = look(judged: nil) else {
            Issue.record("expected a judgement first")
            return
        }
        guard case .stale(1) = look(judged: (1, true)) else {
            Issue.record("expected a stale credential")
            return
        }
        guard case .cancelledNow = look(judged: (1, false), cancelled: true) else {
            Issue.record("expected the cancellation")
            return
        }
        #expect(events.isEmpty)
        guard case .send("t1", 1) = look(judged: (1, false)) else {
            Issue.record("expected a send")
            return
        }
        guard machine.refreshNow(caller: 9, waiter: "r9", now: .zero, events: &events).refresh != nil else {
            Issue.record("expected a refresh")
            return
        }
        guard case .park = look(judged: nil) else {
            Issue.record("expected a park while refreshing")
            return
        }
    }

    // MARK: - The refresh's end

    /// A request rejected for its credential parks behind the refresh it starts (its slot given
    /// back), and so does one whose look found the refresh running. The refresh's success hands
    /// each a slot and authorizes its next attempt with the new credential in the same
    /// transition: they are resumed once, holding the slot, and do not queue again.
    @Test func theRefreshsEndHandsParkedRequestsTheirSlots() {
        var machine = Self.machine("t1", limit: 2)
        var events: [GateEvent] = []
        for request: UInt64 in [0, 1] {
            guard
                case .opened = machine.open(
                    .request(request), request: request, name: "GET /\(request)", priority: .default,
                    needsAuthorization: true, callerID: request, caller: "c\(request)", work: "w\(request)",
                    events: &events)
            else {
                Issue.record("expected a new flight")
                return
            }
        }
        guard
            case .granted(let slot0) = machine.takeSlotNow(
                for: .attempt(key: .request(0), request: 0, number: 1, needsAuthorization: true), isCancelled: false,
                judges: false, events: &events),
            case .send("t1", 1)? = slot0.decision
        else {
            Issue.record("expected request 0 to send at once")
            return
        }
        // Request 0's credential is rejected: it parks behind the refresh it starts.
        events = []
        let rejected = machine.rejected(
            .request(0), request: 0, version: 1, nextAttempt: 2, slot: slot0.priority, reason: .rejected,
            waiter: "p0", now: .zero, events: &events)
        guard rejected.resumption == nil, let (flight, _) = rejected.refresh else {
            Issue.record("expected request 0 to park behind a new refresh")
            return
        }
        #expect(events == [.refreshStarted(fromVersion: 1, request: 0), .redirect(request: 0, credentialVersion: 1)])
        // Request 1 takes a slot before the refresh does, looks, finds it running and parks.
        events = []
        guard
            case .granted(let slot1) = machine.takeSlotNow(
                for: .attempt(key: .request(1), request: 1, number: 1, needsAuthorization: true), isCancelled: false,
                judges: false, events: &events),
            case .park? = slot1.decision
        else {
            Issue.record("expected request 1 to find the refresh running")
            return
        }
        guard
            machine.park(
                .request(1), request: 1, attempt: 1, epoch: slot1.epoch, needsAuthorization: true,
                slot: slot1.priority, waiter: "p1", now: .zero, events: &events
            ).resumption == nil
        else {
            Issue.record("expected request 1 to park")
            return
        }
        #expect(machine.slots.running == 0)
        // The refresh takes the unique slot and succeeds.
        guard case .granted = machine.takeSlotNow(for: .refresh, isCancelled: false, judges: false, events: &events)
        else {
            Issue.record("expected the refresh to take its slot")
            return
        }
        events = []
        let ended = machine.refreshEnded(flight, .succeeded("t2"), releasingSlot: true, events: &events)
        #expect(ended.settled && ended.failure == nil && ended.slotStarts.isEmpty)
        // Both went out with the new credential in the refresh's own transition, after its
        // success, holding their slots (within the limit of 2); nobody queued.
        #expect(
            events == [
                .refreshSucceeded(version: 2), .running(request: 0, attempt: 2, credentialVersion: 2),
                .running(request: 1, attempt: 1, credentialVersion: 2),
            ])
        #expect(machine.slots.running == 2)
        #expect(machine.slots.queuedCount == 0)
        #expect(ended.waiters.map(\.waiter) == ["p0", "p1"])
        for (_, resumption) in ended.waiters {
            guard case .granted(let slot) = resumption, case .send("t2", 2)? = slot.decision, slot.priority == .default
            else {
                Issue.record("expected a parked request to be handed a slot and the new credential, got \(resumption)")
                continue
            }
        }
    }

    /// The refresh's end hands out only the slots free without overtaking, highest priority
    /// first: the others queue again once woken, and a request whose flight ended meanwhile, or
    /// a refresh() caller, gets none.
    @Test func theRefreshsEndHandsOutOnlyFreeSlotsByPriority() {
        var machine = Self.machine(nil, limit: 1)
        var events: [GateEvent] = []
        let priorities: [UInt64: RequestPriority] = [0: .low, 1: .high, 2: .default]
        for request: UInt64 in 0...2 {
            _ = machine.open(
                .request(request), request: request, name: "GET /\(request)", priority: priorities[request]!,
                needsAuthorization: true, callerID: request, caller: "c\(request)", work: "w\(request)",
                events: &events)
        }
        // No credential yet: the first request starts the refresh; each parks in turn.
        var flight: GateRefreshFlight?
        for request: UInt64 in 0...2 {
            guard
                case .granted(let slot) = machine.takeSlotNow(
                    for: .attempt(key: .request(request), request: request, number: 1, needsAuthorization: true),
                    isCancelled: false, judges: false, events: &events)
            else {
                Issue.record("expected a free slot")
                return
            }
            let step = machine.park(
                .request(request), request: request, attempt: 1, epoch: slot.epoch, needsAuthorization: true,
                slot: slot.priority, waiter: "p\(request)", now: .zero, events: &events)
            if let refresh = step.refresh { flight = refresh.flight }
        }
        guard machine.refreshNow(caller: 9, waiter: "r9", now: .zero, events: &events).resumption == nil,
            let flight
        else {
            Issue.record("expected a refresh")
            return
        }
        // Request 2's last caller leaves: its flight ends while it is parked.
        _ = machine.leave(.request(2), caller: 2, events: &events)
        events = []
        let ended = machine.refreshEnded(flight, .succeeded("t1"), releasingSlot: false, events: &events)
        #expect(events == [.refreshSucceeded(version: 1), .running(request: 1, attempt: 1, credentialVersion: 1)])
        #expect(machine.slots.running == 1)
        let wakes = ended.waiters.map { entry -> String in
            switch entry.resumption {
            case .granted: "\(entry.waiter) granted"
            case .proceed: "\(entry.waiter) proceeds"
            case .fail: "\(entry.waiter) fails"
            default: "\(entry.waiter) resumed with \(entry.resumption)"
            }
        }
        #expect(wakes == ["p0 proceeds", "p1 granted", "p2 proceeds", "r9 proceeds"])
    }

    /// A failed refresh hands out no slot: its parked requests fail with it.
    @Test func aFailedRefreshHandsOutNoSlot() {
        var machine = Self.machine(nil)
        var events: [GateEvent] = []
        _ = machine.open(
            .request(0), request: 0, name: "GET /0", priority: .default, needsAuthorization: true, callerID: 0,
            caller: "c0", work: "w0", events: &events)
        guard
            case .granted(let slot) = machine.takeSlotNow(
                for: .attempt(key: .request(0), request: 0, number: 1, needsAuthorization: true), isCancelled: false,
                judges: false, events: &events),
            let (flight, _) = machine.park(
                .request(0), request: 0, attempt: 1, epoch: slot.epoch, needsAuthorization: true,
                slot: slot.priority, waiter: "p0", now: .zero, events: &events
            ).refresh
        else {
            Issue.record("expected a refresh")
            return
        }
        events = []
        let ended = machine.refreshEnded(flight, .failed(.signedOut), releasingSlot: false, events: &events)
        #expect(events == [.refreshFailed(fromVersion: 0)])
        #expect(machine.slots.running == 0)
        guard ended.waiters.count == 1, case .fail(.signedOut) = ended.waiters[0].resumption else {
            Issue.record("expected the parked request to fail")
            return
        }
    }

    /// Attempts queued behind the refresh's `unique` slot start when the refresh gives it back,
    /// in the transition that settles the refresh: their first look sees the new credential
    /// (never the one the refresh replaced), recorded after `refreshSucceeded`; a judged one
    /// is asked for the judge's verdict first.
    @Test func attemptsQueuedBehindTheRefreshStartWithTheNewCredential() {
        var machine = Self.machine("t1")
        var events: [GateEvent] = []
        guard
            let (flight, _) = machine.refreshNow(caller: 9, waiter: "r9", now: .zero, events: &events).refresh,
            case .granted = machine.takeSlotNow(for: .refresh, isCancelled: false, judges: false, events: &events)
        else {
            Issue.record("expected a refresh holding its slot")
            return
        }
        for request: UInt64 in [0, 1] {
            let claimant = Machine.SlotClaimant.attempt(
                key: .request(request), request: request, number: 1, needsAuthorization: true)
            _ = machine.open(
                .request(request), request: request, name: "GET /\(request)", priority: .default,
                needsAuthorization: true, callerID: request, caller: "c\(request)", work: "w\(request)",
                events: &events)
            guard case .busy = machine.takeSlotNow(for: claimant, isCancelled: false, judges: false, events: &events),
                case .enqueued = machine.queue(
                    claimant, id: 100 + request, waiter: "s\(request)", judges: request == 1, events: &events)
            else {
                Issue.record("expected attempt \(request) to queue behind the refresh")
                return
            }
        }
        events = []
        let ended = machine.refreshEnded(flight, .succeeded("t2"), releasingSlot: true, events: &events)
        #expect(events == [.refreshSucceeded(version: 2), .running(request: 0, attempt: 1, credentialVersion: 2)])
        guard ended.slotStarts.count == 2,
            case .send("t2", 2)? = ended.slotStarts[0].slot.decision,
            case .judge("t2", 2)? = ended.slotStarts[1].slot.decision
        else {
            Issue.record("expected both to start with the new credential, got \(ended.slotStarts)")
            return
        }
    }

    // MARK: - Credentials from outside

    /// A sign-in replaces the running refresh (`refreshCancelled`, then `signedIn`) and wakes
    /// the parked requests to go on; a sign-out wakes them to fail; after a shutdown, neither
    /// does anything.
    @Test func signInAndSignOutReplaceTheRefreshAndWakeTheParked() {
        var machine = Self.machine("t1")
        var events: [GateEvent] = []
        guard let (flight, _) = machine.refreshNow(caller: 9, waiter: "r9", now: .zero, events: &events).refresh
        else {
            Issue.record("expected a refresh")
            return
        }
        events = []
        let signedIn = machine.replace(.signIn("t2"), events: &events)
        #expect(events == [.refreshCancelled(fromVersion: 1), .signedIn(version: 2)])
        #expect(signedIn.cancelledRefresh == flight && signedIn.parked == ["r9"] && signedIn.failure == nil)
        #expect(!machine.credentials.isRunning(flight))
        _ = machine.refreshNow(caller: 10, waiter: "r10", now: .zero, events: &events)
        events = []
        let signedOut = machine.replace(.signOut, events: &events)
        #expect(events == [.refreshCancelled(fromVersion: 2), .signedOut])
        #expect(signedOut.parked == ["r10"] && signedOut.failure == .signedOut && !signedOut.finishesJournal)
        _ = machine.replace(.shutdown, events: &events)
        events = []
        let late = machine.replace(.signIn("t3"), events: &events)
        #expect(events.isEmpty && late.parked.isEmpty && late.cancelledRefresh == nil)
        #expect(machine.credentials.version == 2)
    }

    /// A backoff records `retry` with the server's delay, or the schedule's with jitter, and
    /// gives the slot back in the same transition: the attempt queued behind it starts there.
    @Test func aBackoffGivesTheSlotBack() {
        var machine = Self.machine("t1", limit: 1)
        var events: [GateEvent] = []
        let first = Machine.SlotClaimant.attempt(key: .request(0), request: 0, number: 1, needsAuthorization: true)
        let second = Machine.SlotClaimant.attempt(key: .request(1), request: 1, number: 1, needsAuthorization: true)
        Self.openOwn(&machine, request: 1, events: &events)
        guard
            case .granted(let slot) = machine.takeSlotNow(
                for: first, isCancelled: false, judges: false, events: &events),
            case .enqueued = machine.queue(second, id: 7, waiter: "s1", judges: false, events: &events)
        else {
            Issue.record("expected one attempt running and one queued")
            return
        }
        events = []
        let backOff = machine.backOff(
            request: 0, attempt: 1, retryAfter: .seconds(2), schedule: Self.schedule, slot: slot.priority,
            events: &events)
        #expect(backOff.delay == .seconds(2))
        #expect(backOff.slotStarts.map(\.waiter) == ["s1"])
        #expect(
            events == [
                .retry(request: 0, attempt: 1, delay: .seconds(2)),
                .running(request: 1, attempt: 1, credentialVersion: 1),
            ])
        // No server delay: the schedule's, with jitter, within its bounds.
        events = []
        let scheduled = machine.backOff(
            request: 1, attempt: 1, retryAfter: nil, schedule: Self.schedule, slot: .default, events: &events)
        #expect(scheduled.delay > .zero && scheduled.delay <= .seconds(1))
    }

    /// A parked request cancelled while parked leaves once; the refresh's end then has nobody
    /// to wake.
    @Test func aCancelledParkedRequestLeavesOnce() {
        var machine = Self.machine("t1")
        var events: [GateEvent] = []
        guard let (flight, _) = machine.refreshNow(caller: 9, waiter: "r9", now: .zero, events: &events).refresh
        else {
            Issue.record("expected a refresh")
            return
        }
        #expect(machine.cancelParked(request: 9) == "r9")
        #expect(machine.cancelParked(request: 9) == nil)
        let ended = machine.refreshEnded(flight, .succeeded("t2"), releasingSlot: false, events: &events)
        #expect(ended.settled && ended.waiters.isEmpty)
    }
}
