import Testing

@testable import ConductorCore
@testable import ConductorGraph

/// The storage's transitions of shared limits and pausing, as the storage makes them.
extension GraphStateMachine {
    mutating func admit(
        _ grants: [(limit: TaskLimit, node: Int32, ticket: UInt64)], effects: inout GraphEffects
    ) -> [TaskLimit] {
        let unwanted = admissions.admit(
            grants, isRunning: isRunning, table: &table, readyQueue: &readyQueue, effects: &effects)
        wakeDriverIfNeeded(&effects)
        return unwanted
    }

    mutating func pause(effects: inout GraphEffects) {
        admissions.pause(isRunning: isRunning, table: &table, workers: &workers, effects: &effects)
    }

    mutating func resume(effects: inout GraphEffects) {
        admissions.resume(isRunning: isRunning, table: table, workers: &workers, effects: &effects)
        wakeDriverIfNeeded(&effects)
    }

    var isPaused: Bool { admissions.isPaused }
}

/// A run's side of shared limits, driven by hand: the machine's requests are effects, and a
/// grant is a call of `admit` — so each side of the grant-in-flight race is one line here.
@Suite struct GraphAdmissionTests {
    typealias Machine = GraphStateMachine

    static func machine(_ graph: TaskGraph, limit: Int = .max) -> (Machine, GraphEffects) {
        var machine = Machine(concurrencyLimit: limit, parallelWorkers: 1)
        var effects = GraphEffects()
        machine.insert(graph.definitions, now: 0, effects: &effects)
        return (machine, effects)
    }

    static func grant(_ request: GraphAdmissions.Request) -> (limit: TaskLimit, node: Int32, ticket: UInt64) {
        (request.limit, request.node, request.ticket)
    }

    static func isWaiting(_ machine: inout Machine) -> Bool {
        if case .wait = machine.nextForDriver(now: 1) { return true }
        return false
    }

    @Test func aLimitedTaskAsksForItsPlaceBeforeItIsReady() throws {
        let database = TaskLimit(1, name: "database")
        var graph = TaskGraph()
        graph.add("a", options: TaskOptions(limits: [database])) { _ in }
        graph.add("b") { _ in }
        var (machine, effects) = Self.machine(graph)
        let request = try #require(effects.permitRequests.first)
        #expect(effects.permitRequests.count == 1)
        #expect(request.limit === database && request.node == 0)
        #expect(machine.table.nodes[0].phase == .admitting)
        // "b" names no limit: it is ready; "a" is not handed out before its grant.
        guard case .spawn(let first, _) = machine.nextForDriver(now: 1) else { throw CancellationError() }
        #expect(first.node == 1)
        #expect(Self.isWaiting(&machine))
        var admitted = GraphEffects()
        #expect(machine.admit([Self.grant(request)], effects: &admitted).isEmpty)
        #expect(machine.table.nodes[0].phase == .ready)
        guard case .spawn(let second, _) = machine.nextForDriver(now: 2) else { throw CancellationError() }
        #expect(second.node == 0)
        // Its end gives the place back, once.
        var ended = GraphEffects()
        _ = machine.complete(0, outcome: .succeeded, startedAt: 2, now: 3, effects: &ended)
        #expect(ended.permitReleases.map(ObjectIdentifier.init) == [ObjectIdentifier(database)])
    }

    /// Places are taken one at a time, in the order the limits were made, whatever order the
    /// task names them in: two tasks naming A and B in opposite orders cannot deadlock.
    @Test func placesAreTakenInCreationOrder() throws {
        let first = TaskLimit(1, name: "first")
        let second = TaskLimit(1, name: "second")
        var graph = TaskGraph()
        graph.add("a", options: TaskOptions(limits: [second, first])) { _ in }
        var (machine, effects) = Self.machine(graph)
        let request = try #require(effects.permitRequests.first)
        #expect(request.limit === first)
        var next = GraphEffects()
        _ = machine.admit([Self.grant(request)], effects: &next)
        let nextRequest = try #require(next.permitRequests.first)
        #expect(nextRequest.limit === second)
        #expect(machine.table.nodes[0].phase == .admitting)
        var done = GraphEffects()
        _ = machine.admit([Self.grant(nextRequest)], effects: &done)
        #expect(machine.table.nodes[0].phase == .ready)
    }

    /// Removal while the task waits: it ends cancelled (prevented), its request is withdrawn,
    /// and a grant already on its way is given back when it arrives — nothing twice.
    @Test func aGrantReachingARemovedTaskIsGivenBack() throws {
        let limit = TaskLimit(2, name: "pool")
        let other = TaskLimit(1, name: "other")
        var graph = TaskGraph()
        graph.add("a", options: TaskOptions(limits: [limit, other])) { _ in }
        var (machine, effects) = Self.machine(graph)
        let request = try #require(effects.permitRequests.first)
        var afterFirst = GraphEffects()
        _ = machine.admit([Self.grant(request)], effects: &afterFirst)
        let second = try #require(afterFirst.permitRequests.first)
        var removed = GraphEffects()
        #expect(machine.remove("a", now: 1, effects: &removed) == .prevented)
        #expect(removed.cancelPermitRequests.map(\.ticket) == [second.ticket])
        #expect(removed.permitReleases.map(ObjectIdentifier.init) == [ObjectIdentifier(limit)])
        var late = GraphEffects()
        let unwanted = machine.admit([Self.grant(second)], effects: &late)
        #expect(unwanted.map(ObjectIdentifier.init) == [ObjectIdentifier(other)])
        #expect(late.permitReleases.isEmpty && late.permitRequests.isEmpty)
    }

    @Test func aStopGivesBackThePlacesOfTasksNotStarted() throws {
        let limit = TaskLimit(1, name: "pool")
        var graph = TaskGraph()
        graph.add("a", options: TaskOptions(limits: [limit])) { _ in }
        graph.add("b", options: TaskOptions(limits: [limit])) { _ in }
        var (machine, effects) = Self.machine(graph)
        #expect(effects.permitRequests.count == 2)
        var admitted = GraphEffects()
        _ = machine.admit([Self.grant(effects.permitRequests[0])], effects: &admitted)
        var stopped = GraphEffects()
        machine.cancel(now: 1, effects: &stopped)
        #expect(stopped.permitReleases.count == 1)
        #expect(stopped.cancelPermitRequests.map(\.node) == [1])
        #expect(machine.outcome != nil)
    }

    @Test func aTaskWithoutLimitsLeavesNoPermitWork() throws {
        var graph = TaskGraph()
        graph.add("a") { _ in }
        var (machine, effects) = Self.machine(graph)
        #expect(effects.permitRequests.isEmpty)
        guard case .spawn(let assignment, _) = machine.nextForDriver(now: 1) else { throw CancellationError() }
        var ended = GraphEffects()
        _ = machine.complete(assignment.node, outcome: .succeeded, startedAt: 1, now: 2, effects: &ended)
        #expect(ended.lists == nil)
    }

    // MARK: - Pausing

    /// A pause gives back the places of a task not yet started and withdraws its request; the
    /// resume asks again with a fresh ticket, so a grant of the old one is given back.
    @Test func pauseGivesBackUnstartedPlacesAndResumeAsksAgain() throws {
        let limit = TaskLimit(1, name: "pool")
        var graph = TaskGraph()
        graph.add("a", options: TaskOptions(limits: [limit])) { _ in }
        graph.add("b", options: TaskOptions(limits: [limit])) { _ in }
        var (machine, effects) = Self.machine(graph)
        let (requestA, requestB) = (effects.permitRequests[0], effects.permitRequests[1])
        var admitted = GraphEffects()
        _ = machine.admit([Self.grant(requestA)], effects: &admitted)
        var paused = GraphEffects()
        machine.pause(effects: &paused)
        #expect(machine.isPaused)
        #expect(paused.permitReleases.count == 1)
        #expect(paused.cancelPermitRequests.map(\.node) == [1])
        #expect(machine.table.nodes[0].phase == .admitting)
        #expect(Self.isWaiting(&machine))
        // B's grant was on its way: it is not wanted while paused.
        var late = GraphEffects()
        #expect(machine.admit([Self.grant(requestB)], effects: &late).count == 1)
        var resumed = GraphEffects()
        machine.resume(effects: &resumed)
        #expect(resumed.permitRequests.map(\.node) == [0, 1])
        #expect(Set(resumed.permitRequests.map(\.ticket)).isDisjoint(with: [requestA.ticket, requestB.ticket]))
        // The old ticket's grant is given back; the new one admits.
        var stale = GraphEffects()
        #expect(machine.admit([Self.grant(requestA)], effects: &stale).count == 1)
        var fresh = GraphEffects()
        #expect(machine.admit([Self.grant(resumed.permitRequests[0])], effects: &fresh).isEmpty)
        guard case .spawn(let assignment, _) = machine.nextForDriver(now: 3) else { throw CancellationError() }
        #expect(assignment.node == 0)
    }

    @Test func aPausedRunStartsNothingUntilResumed() throws {
        var graph = TaskGraph()
        graph.add("a") { _ in }
        var (machine, _) = Self.machine(graph)
        var effects = GraphEffects()
        machine.pause(effects: &effects)
        #expect(Self.isWaiting(&machine))
        machine.resume(effects: &effects)
        #expect(!machine.isPaused)
        guard case .spawn = machine.nextForDriver(now: 2) else { throw CancellationError() }
    }

    /// A retry waits while paused, and the wait ends when the run resumes.
    @Test func aRetryWaitsForTheResume() throws {
        var graph = TaskGraph()
        graph.add("a", options: TaskOptions(retry: .attempts(2, backoff: .zero))) { _ in }
        var (machine, _) = Self.machine(graph)
        guard case .spawn(let assignment, _) = machine.nextForDriver(now: 1) else { throw CancellationError() }
        var effects = GraphEffects()
        struct Failure: Error {}
        #expect(
            machine.attemptFailed(
                assignment.node, attempt: 1, error: Failure(), delay: .zero, now: 2, effects: &effects))
        machine.pause(effects: &effects)
        #expect(machine.retryStarting(assignment.node, attempt: 2, now: 3) == .wait)
        machine.resume(effects: &effects)
        #expect(machine.retryStarting(assignment.node, attempt: 2, now: 4) == .start)
    }

    @Test func aCapacityBelowOneIsRefusedNamingTaskAndLimit() {
        var graph = TaskGraph()
        graph.add("sync", options: TaskOptions(limits: [TaskLimit(0, name: "database")])) { _ in }
        #expect {
            try graph.validate()
        } throws: { error in
            let error = error as? GraphError
            return error?.code == .invalidConfiguration && error?.message.contains("'sync'") == true
                && error?.message.contains("'database'") == true
        }
    }
}
