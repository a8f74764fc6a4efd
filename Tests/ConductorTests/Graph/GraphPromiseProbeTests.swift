import Conductor
import ConductorTestKit
import Testing

/// An outside tester's probes of the run's promises, through the public API only: races
/// between removal, cancellation, timeouts, retries and the concurrency limit, each driven
/// by a manual clock and latches (never a sleep), each checking what the report and the
/// events say against what the bodies did (a shared log every body writes its begin and end
/// into).
@Suite(.timeLimit(.minutes(1)))
struct GraphPromiseProbeTests {
    private struct Fault: Error {}

    // MARK: - Removal during a retry's backoff

    /// A task removed while it sleeps out its retry's backoff: however far the clock then
    /// moves, the second attempt never begins, whether the task's body runs on a worker or in
    /// a task of its own.
    @Test(arguments: [nil, Duration.seconds(10)])
    func removalInTheBackoffPreventsTheNextAttempt(timeout: Duration?) async throws {
        let clock = ManualClock()
        let log = BodyLog()
        var graph = TaskGraph()
        graph.add("flaky", options: TaskOptions(timeout: timeout, retry: .attempts(3, backoff: .seconds(1)))) {
            context in
            log.begin("flaky", context.attempt)
            log.end("flaky", context.attempt, .threw)
            throw Fault()
        }
        graph.add("dependent", dependsOn: ["flaky"]) { context in log.begin("dependent", context.attempt) }
        // Keeps the run going past the backoff: once every task has ended, the run cancels a
        // worker still sleeping out a backoff, and the retry would not be tried at all.
        graph.add("other") { _ in try await clock.sleep(for: .seconds(5)) }
        let run = try graph.start(clock: clock)
        await clock.sleepers(atLeast: 1, for: .retryBackoff)
        #expect(try run.remove("flaky") == .prevented)
        let report = try await reportAdvancing(run, clock, by: .seconds(1), maxSteps: 20)
        let events = await run.events.collected()
        #expect(log.begins(of: "flaky") == 1, "an attempt began after a removal that answered prevented")
        #expect(report["flaky"]?.attempts == 1)
        #expect(report["flaky"]?.outcome.kind == .cancelled)
        #expect(report["dependent"]?.outcome.kind == .skipped(dependency: "flaky"))
        #expect(log.begins(of: "dependent") == 0)
        #expect(events.startedAttempts(of: "flaky") == [1])
        // A removed required task is cancelled, not failed: the run itself completes.
        #expect(report.outcome == .completed)
        checkEvents(events, against: report, context: "removal in backoff")
    }

    /// `remove` of a task with retries while its body runs on a worker answers `stillRunning`:
    /// the body is cancelled, runs to its end, and no attempt follows it. Whether it then fails
    /// or returns, the task ends as cancelled and removed with one attempt, however far the
    /// clock moves, and its dependent is skipped.
    @Test(arguments: [true, false])
    func stillRunningMeansNoRetryFollows(bodyFails: Bool) async throws {
        let clock = ManualClock()
        let log = BodyLog()
        let entered = Latch()
        let release = Latch()
        var graph = TaskGraph()
        graph.add("work", options: TaskOptions(retry: .attempts(3, backoff: .seconds(1)))) { context in
            log.begin("work", context.attempt)
            entered.open()
            await release.wait()
            log.end("work", context.attempt, bodyFails ? .threw : .returned)
            if bodyFails { throw Fault() }
        }
        graph.add("after", dependsOn: ["work"]) { context in log.begin("after", context.attempt) }
        let run = try graph.start(clock: clock)
        await entered.wait()
        #expect(try run.remove("work") == .stillRunning)
        release.open()
        let report = try await reportAdvancing(run, clock, by: .seconds(1), maxSteps: 20)
        let events = await run.events.collected()
        #expect(log.attempts(of: "work") == [1], "an attempt followed a removal that answered stillRunning")
        #expect(report["work"]?.attempts == 1)
        #expect(report["work"]?.outcome.kind == .cancelled)
        #expect(report["work"]?.wasRemoved == true)
        #expect(report["after"]?.outcome.kind == .skipped(dependency: "work"))
        #expect(log.begins(of: "after") == 0)
        checkEvents(events, against: report, context: "stillRunning, body \(bodyFails ? "fails" : "returns")")
    }

    /// A task that needs two failed attempts before it succeeds, with a dependent that needs
    /// its success: the dependent begins once, after the last attempt's body returned, and
    /// reads that attempt's value; the report counts 3 attempts and the events say 2 retries.
    @Test func aDependentWaitsForTheRetriedSuccess() async throws {
        let clock = ManualClock()
        let log = BodyLog()
        let read = Recorder<Int>()
        var graph = TaskGraph()
        let flaky = graph.add("flaky", options: TaskOptions(retry: .attempts(3, backoff: .seconds(1)))) { context in
            log.begin("flaky", context.attempt)
            guard context.attempt == 3 else {
                log.end("flaky", context.attempt, .threw)
                throw Fault()
            }
            log.end("flaky", context.attempt, .returned)
            return context.attempt * 10
        }
        graph.add("user", dependsOn: ["flaky"]) { context in
            log.begin("user", context.attempt)
            read.append(try context.value(of: flaky))
        }
        let run = try graph.start(clock: clock)
        let report = try await reportAdvancing(run, clock, by: .seconds(1), maxSteps: 20)
        let events = await run.events.collected()
        #expect(log.beginOrder == ["flaky", "flaky", "flaky", "user"])
        #expect(log.entries.firstIndex { if case .begin("user", _, _, _) = $0 { true } else { false } }! > 5)
        #expect(read.all == [30])
        #expect(report["flaky"]?.attempts == 3)
        #expect(report["user"]?.attempts == 1)
        #expect(events.startedAttempts(of: "flaky") == [1, 2, 3])
        #expect(events.count { if case .taskRetried("flaky", _, _, _, _) = $0 { true } else { false } } == 2)
        checkEvents(events, against: report, context: "retried success")
    }

    // MARK: - Removal racing a failing attempt in a task of its own

    /// A timed task with attempts left whose body throws just as it is removed: the removal
    /// lands before the attempt settles (`abandoned`), after it settled but before its worker
    /// recorded the failure, or during the backoff (both `prevented`). Whatever the order, no
    /// second attempt begins (the clock is moved far past the backoff), the task ends as
    /// cancelled with one attempt, and the events agree.
    @Test func removalRacingAFailingTimedAttemptNeverRetries() async throws {
        var answers: [TaskRemoval: Int] = [:]
        for round in 0..<40 {
            let clock = ManualClock()
            let log = BodyLog()
            let entered = Latch()
            let release = Latch()
            var graph = TaskGraph()
            graph.add("fetch", options: TaskOptions(timeout: .seconds(30), retry: .attempts(3, backoff: .seconds(1)))) {
                context in
                log.begin("fetch", context.attempt)
                if context.attempt == 1 {
                    entered.open()
                    await release.wait()
                }
                log.end("fetch", context.attempt, .threw)
                throw Fault()
            }
            let run = try graph.start(clock: clock)
            await entered.wait()
            release.open()
            let answer = try run.remove("fetch")
            answers[answer, default: 0] += 1
            #expect(answer == .abandoned || answer == .prevented, "round \(round): \(answer)")
            clock.advance(by: .seconds(100))
            let report = try await run.report()
            let events = await run.events.collected()
            #expect(log.begins(of: "fetch") == 1, "round \(round): a retry began after remove answered \(answer)")
            #expect(report["fetch"]?.outcome.kind == .cancelled, "round \(round)")
            #expect(report["fetch"]?.attempts == 1, "round \(round)")
            #expect(events.startedAttempts(of: "fetch") == [1], "round \(round)")
            checkEvents(events, against: report, context: "round \(round)")
        }
        // Not asserted (the order is the machine's), but shows which races the rounds hit.
        print("removalRacingAFailingTimedAttemptNeverRetries answers:", answers)
    }

    // MARK: - Timeout against the body, and against cancel

    /// The body's sleep and its timeout end at the same instant. Whichever settles first is
    /// what the report says: succeeded only if the body returned (and then its dependent ran
    /// and read the value), timed out otherwise (and then the dependent never began); one
    /// ending event either way.
    @Test func aTimeoutFiringAsTheBodyReturnsHasOneWinner() async throws {
        var winners: [String: Int] = [:]
        for round in 0..<30 {
            let clock = ManualClock()
            let log = BodyLog()
            var graph = TaskGraph()
            let timed = graph.add("timed", options: TaskOptions(timeout: .seconds(1), failure: .optional)) { context in
                try await sleepLogged("timed", context, for: .seconds(1), on: clock, log: log)
                return 42
            }
            let read = Recorder<Int>()
            graph.add("use", dependsOn: ["timed"]) { context in
                log.begin("use", context.attempt)
                read.append(try context.value(of: timed))
            }
            let run = try graph.start(clock: clock)
            await clock.sleepers(atLeast: 2)  // the body's sleep and the run's timer
            clock.advance(by: .seconds(1))
            let report = try await run.report()
            let events = await run.events.collected()
            let outcome = try #require(report["timed"]?.outcome.kind)
            winners["\(outcome)", default: 0] += 1
            switch outcome {
            case .succeeded:
                #expect(log.ends(of: "timed") == [.returned], "round \(round)")
                #expect(read.all == [42], "round \(round)")
                #expect(report["use"]?.outcome.kind == .succeeded, "round \(round)")
            case .timedOut(after: .seconds(1)):
                #expect(log.begins(of: "use") == 0, "round \(round): a dependent of a timed-out task ran")
                #expect(report["use"]?.outcome.kind == .skipped(dependency: "timed"), "round \(round)")
            default:
                Issue.record("round \(round): 'timed' ended \(outcome)")
            }
            checkEvents(events, against: report, context: "round \(round)")
        }
        print("aTimeoutFiringAsTheBodyReturnsHasOneWinner:", winners)
    }

    /// `cancel()` right as a timed attempt's body and timeout both come due: the task ends
    /// once, as succeeded (only if its body returned), timed out or cancelled; its dependent
    /// begins only after a success, and is reported succeeded if it did (its body returns at
    /// once); the run finishes. (Whether a body may begin after `cancel()` returned is
    /// `GraphPromiseSimulationTests`' to check: here the window is a few instructions wide.)
    @Test func cancelRacingATimedAttemptAndItsTimeout() async throws {
        for round in 0..<30 {
            let clock = ManualClock()
            let log = BodyLog()
            var graph = TaskGraph()
            graph.add("timed", options: TaskOptions(timeout: .seconds(1))) { context in
                try await sleepLogged("timed", context, for: .seconds(1), on: clock, log: log)
            }
            graph.add("use", dependsOn: ["timed"]) { context in log.begin("use", context.attempt) }
            let run = try graph.start(clock: clock)
            await clock.sleepers(atLeast: 2)
            clock.advance(by: .seconds(1))
            run.cancel()
            log.markStopped()
            let report = try await run.report()
            let events = await run.events.collected()
            let outcome = try #require(report["timed"]?.outcome.kind)
            switch outcome {
            case .succeeded: #expect(log.ends(of: "timed") == [.returned], "round \(round)")
            case .timedOut, .cancelled: #expect(log.begins(of: "use") == 0, "round \(round)")
            default: Issue.record("round \(round): 'timed' ended \(outcome)")
            }
            if log.begins(of: "use") == 1 {
                #expect(
                    report["use"]?.outcome.kind == .succeeded,
                    "round \(round): 'use' returned, yet is reported otherwise")
            }
            checkEvents(events, against: report, context: "round \(round)")
        }
    }

    // MARK: - Stops

    /// A required task fails while a task with retries backs off: the run stops, and the
    /// backing-off task's next attempt never begins, however far the clock moves.
    @Test func aRequiredFailureStopsARetryInItsBackoff() async throws {
        let clock = ManualClock()
        let log = BodyLog()
        let fail = Latch()
        var graph = TaskGraph()
        graph.add("flaky", options: TaskOptions(retry: .attempts(5, backoff: .seconds(1)), failure: .optional)) {
            context in
            log.begin("flaky", context.attempt)
            throw Fault()
        }
        graph.add("critical") { context in
            log.begin("critical", context.attempt)
            await fail.wait()
            throw Fault()
        }
        let run = try graph.start(clock: clock)
        await clock.sleepers(atLeast: 1, for: .retryBackoff)
        fail.open()
        await run.event { if case .taskFailed("critical", _, _) = $0 { true } else { false } }
        clock.advance(by: .seconds(100))
        let report = try await run.report()
        let events = await run.events.collected()
        #expect(log.begins(of: "flaky") == 1)
        #expect(report["flaky"]?.outcome.kind == .cancelled)
        #expect(report["critical"]?.outcome.kind == .failed)
        guard case .failed(let error) = report.outcome else {
            Issue.record("expected the run to fail, got \(report.outcome)")
            return
        }
        #expect(error.message.contains("'critical'"))
        checkEvents(events, against: report, context: "required failure")
    }

    /// Milestones awaited after the run stopped: one reached before the stop keeps its time;
    /// one whose tasks had not all ended is missed; an unknown name is still unknown. None of
    /// them waits.
    @Test func milestonesAwaitedAfterTheRunStopped() async throws {
        let clock = ManualClock()
        let hold = Latch()
        var graph = TaskGraph()
        graph.add("quick") { _ in }
        graph.add("slow") { _ in await hold.wait() }
        graph.addMilestone("early", after: ["quick"])
        graph.addMilestone("late", after: ["quick", "slow"])
        let run = try graph.start(clock: clock)
        let early = try await run.reached("early")
        run.cancel()
        hold.open()
        let report = try await run.report()
        #expect(try await run.reached("early") == early)
        do throws(GraphError) {
            try await run.reached("late")
            Issue.record("a milestone after a task that outlived the stop was reached")
        } catch {
            #expect(error.code == .milestoneMissed)
        }
        do throws(GraphError) {
            try await run.reached("nowhere")
            Issue.record("an unknown milestone was reached")
        } catch {
            #expect(error.code == .unknownMilestone)
        }
        #expect(report.milestones.map(\.name) == ["early"])
        #expect(report.outcome == .cancelled)
    }

    /// Milestones added while the run goes on: one after tasks that have all ended already is
    /// reached at once; one after a task still running is reached when it ends; one after no
    /// task at all is reached at once; a task added after a milestone that was reached runs.
    @Test func milestonesAddedWhileTheRunGoesOn() async throws {
        let hold = Latch()
        let entered = Latch()
        var graph = TaskGraph()
        graph.add("quick") { _ in }
        graph.add("slow") { _ in
            entered.open()
            await hold.wait()
        }
        graph.addMilestone("first", after: ["quick"])
        let run = try graph.start()
        try await run.reached("first")
        await entered.wait()
        var more = TaskGraph()
        more.addMilestone("afterQuick", after: ["quick"])
        more.addMilestone("afterSlow", after: ["slow"])
        more.addMilestone("afterNothing", after: [])
        try run.add(more)
        try await run.reached("afterQuick")
        try await run.reached("afterNothing")
        let ran = Lock(false)
        try run.add("late", dependsOn: ["afterQuick"]) { _ in ran.withLock { $0 = true } }
        hold.open()
        try await run.reached("afterSlow")
        let report = try await run.report()
        #expect(ran.withLock { $0 })
        #expect(report["late"]?.outcome.kind == .succeeded)
        #expect(Set(report.milestones.map(\.name)) == ["first", "afterQuick", "afterSlow", "afterNothing"])
        checkEvents(await run.events.collected(), against: report, context: "milestones added")
    }

    /// `add` after `cancel()` throws `runFinished` and adds nothing; `remove` of a task of a
    /// stopped run finds it ended.
    @Test func addAndRemoveAfterCancel() async throws {
        let hold = Latch()
        var graph = TaskGraph()
        graph.add("slow") { _ in await hold.wait() }
        graph.add("later", dependsOn: ["slow"]) { _ in }
        let run = try graph.start()
        run.cancel()
        let extraRan = Lock(false)
        do throws(GraphError) {
            try run.add("extra") { _ in extraRan.withLock { $0 = true } }
            Issue.record("add after cancel() did not throw")
        } catch {
            #expect(error.code == .runFinished)
        }
        #expect(try run.remove("later") == .alreadyEnded)
        hold.open()
        let report = try await run.report()
        #expect(report["extra"] == nil)
        #expect(!extraRan.withLock { $0 })
        #expect(report["later"]?.outcome.kind == .cancelled)
    }

    // MARK: - Concurrency limit and priorities

    /// Under a limit of 1, ready tasks start highest priority first, first in first out
    /// within a priority — including a task added while the run is going — and a removed
    /// waiting task never starts and gives its turn to the next.
    @Test func aLimitOfOneStartsReadyTasksByPriorityAndSkipsRemovedOnes() async throws {
        let log = BodyLog()
        let gate = Latch()
        let gateEntered = Latch()
        var graph = TaskGraph()
        graph.add("gate") { _ in
            gateEntered.open()
            await gate.wait()
        }
        let waiting: [(String, TaskPriority)] = [
            ("low1", .low), ("high1", .high), ("medium1", .medium), ("high2", .high), ("low2", .low),
            ("medium2", .medium),
        ]
        for (id, priority) in waiting {
            graph.add(id, dependsOn: ["gate"], options: TaskOptions(priority: priority)) { context in
                log.begin(id, context.attempt)
                log.end(id, context.attempt, .returned)
            }
        }
        let run = try graph.start(concurrencyLimit: 1)
        await gateEntered.wait()
        try run.add("added", dependsOn: ["gate"], options: TaskOptions(priority: .high)) { context in
            log.begin("added", context.attempt)
        }
        #expect(try run.remove("medium1") == .prevented)
        gate.open()
        let report = try await run.report()
        #expect(log.beginOrder == ["high1", "high2", "added", "medium2", "low1", "low2"])
        #expect(report["medium1"]?.outcome.kind == .cancelled)
        #expect(report["medium1"]?.attempts == 0)
        #expect(report.outcome == .completed)
    }

    /// Under a limit of 2, never more than 2 bodies run at once, while removals (of running
    /// tasks with a timeout, which are abandoned, and of waiting ones) free slots. The
    /// abandoned body is not counted: the run stops waiting for it at once, by design.
    @Test func theLimitHoldsWhileRemovalsFreeSlots() async throws {
        let clock = ManualClock()
        let running = Lock((now: 0, most: 0))
        var graph = TaskGraph()
        for index in 0..<8 {
            let counted = index != 0
            graph.add(
                "t\(index)",
                options: TaskOptions(timeout: index.isMultiple(of: 2) ? .seconds(60) : nil, failure: .optional)
            ) { _ in
                if counted {
                    running.withLock {
                        $0.now += 1
                        $0.most = max($0.most, $0.now)
                    }
                }
                defer { if counted { running.withLock { $0.now -= 1 } } }
                try await clock.sleep(for: .seconds(1))
            }
        }
        let run = try graph.start(concurrencyLimit: 2, clock: clock)
        await clock.sleepers(atLeast: 3)  // two bodies and the timer
        // t0 (timed) is abandoned; t7 waits and is prevented. Abandoned bodies stop on their
        // cancellation, so the count goes down with them.
        #expect(try run.remove("t0") == .abandoned)
        #expect(try run.remove("t7") == .prevented)
        let report = try await reportAdvancing(run, clock, by: .seconds(1), maxSteps: 100)
        #expect(running.withLock { $0.most } <= 2, "more bodies ran at once than the limit")
        #expect(report["t0"]?.outcome.kind == .cancelled)
        #expect(report["t7"]?.outcome.kind == .cancelled)
        #expect(report["t7"]?.attempts == 0)
        for index in 1..<7 { #expect(report["t\(index)"]?.outcome.kind == .succeeded, "t\(index)") }
    }
}

// MARK: - Bodies and the clock

/// A body that sleeps `duration` on `clock`, logging its beginning and how it ended.
func sleepLogged(
    _ id: String, _ context: TaskContext, for duration: Duration, on clock: ManualClock, log: BodyLog
) async throws {
    log.begin(id, context.attempt)
    do {
        try await clock.sleep(for: duration)
    } catch {
        log.end(id, context.attempt, .threw)
        throw error
    }
    log.end(id, context.attempt, .returned)
}

/// The run's report, moving `clock` on by `step` until the run has finished: at most
/// `maxSteps` steps, and the expectation fails if that is not enough.
func reportAdvancing(
    _ run: GraphRun, _ clock: ManualClock, by step: Duration, maxSteps: Int,
    sourceLocation: SourceLocation = #_sourceLocation
) async throws -> RunReport {
    let finished = Lock(false)
    let reporter = Task {
        let report = try await run.report()
        finished.withLock { $0 = true }
        clock.stateChanged()
        return report
    }
    let done = try await clock.advance(by: step, until: { finished.withLock { $0 } }, maxSteps: maxSteps)
    #expect(done, "the run did not finish within \(maxSteps) steps of \(step)", sourceLocation: sourceLocation)
    return try await reporter.value
}

// MARK: - Checking events against the report

/// Checks the promises the events make: `runFinished` once and last with the report's
/// outcome; for each task one ending event, of the report's kind, after its start events,
/// whose count is its attempts. (Not that times never go backwards: the events come in the
/// order of the run's transitions, but each transition's time is read before it takes the
/// run's lock, so one that waited for the lock may record a time a few microseconds before
/// the one it followed.)
func checkEvents(_ events: [GraphEvent], against report: RunReport, context: String) {
    guard case .runFinished(let outcome, _) = events.last else {
        Issue.record("\(context): the last event is not runFinished: \(events.last.map { "\($0)" } ?? "none")")
        return
    }
    #expect(outcome == report.outcome, "\(context)")
    let finishes = events.filter { if case .runFinished = $0 { true } else { false } }
    #expect(finishes.count == 1, "\(context): \(finishes.count) runFinished events")
    for record in report.tasks {
        let mine = events.enumerated().filter { $0.element.taskID == record.id }
        let endings = mine.filter { $0.element.endingKind != nil }
        guard endings.count == 1, let ending = endings.first else {
            Issue.record("\(context): \(record.id) has \(endings.count) ending events: \(mine.map { "\($0.element)" })")
            continue
        }
        #expect(
            ending.element.endingKind == record.outcome.kind.eventKind,
            "\(context): \(record.id) ended '\(ending.element)' but is reported \(record.outcome)")
        let starts = mine.filter { if case .taskStarted = $0.element { true } else { false } }
        #expect(
            starts.count == record.attempts,
            "\(context): \(record.id) started \(starts.count)×, \(record.attempts) attempts")
        #expect(starts.allSatisfy { $0.offset < ending.offset }, "\(context): \(record.id) started after it ended")
        if let firstStart = starts.first {
            let queued = mine.first { if case .taskQueued = $0.element { true } else { false } }
            #expect(
                queued.map { $0.offset < firstStart.offset } ?? false,
                "\(context): \(record.id) started without being queued first")
        }
    }
}

extension GraphEvent {
    /// The kind of a task's ending event, `nil` for any other event. A timed-out task's
    /// ending is `taskTimedOut`.
    fileprivate var endingKind: String? {
        switch self {
        case .taskSucceeded: "succeeded"
        case .taskFailed: "failed"
        case .taskTimedOut: "timedOut"
        case .taskSkipped: "skipped"
        case .taskCancelled: "cancelled"
        default: nil
        }
    }
}

extension TaskOutcome.Kind {
    fileprivate var eventKind: String {
        switch self {
        case .succeeded: "succeeded"
        case .failed: "failed"
        case .timedOut: "timedOut"
        case .skipped: "skipped"
        case .cancelled: "cancelled"
        }
    }
}

extension [GraphEvent] {
    /// The attempt numbers of `id`'s start events, in order.
    func startedAttempts(of id: String) -> [Int] {
        compactMap { event in
            guard case .taskStarted(id, let attempt, _) = event else { return nil }
            return attempt
        }
    }
}

extension EventSequence {
    func collected() async -> [Element] {
        var all: [Element] = []
        for await element in self { all.append(element) }
        return all
    }
}

// MARK: - The bodies' own log

/// What bodies did, in the order they did it: every body writes its begin and its end here,
/// so a test compares the report with the bodies' own account. `markStopped()` (called right
/// after `cancel()` returns) makes every later begin a violation on record.
final class BodyLog: Sendable {
    enum End: Hashable, Sendable { case returned, threw }

    enum Entry: Hashable, Sendable {
        case begin(String, attempt: Int, afterStop: Bool, cancelled: Bool)
        case end(String, attempt: Int, End)
    }

    private let state = Lock((entries: [Entry](), stopped: false))

    func begin(_ id: String, _ attempt: Int) {
        let cancelled = Task.isCancelled
        state.withLock { $0.entries.append(.begin(id, attempt: attempt, afterStop: $0.stopped, cancelled: cancelled)) }
    }

    func end(_ id: String, _ attempt: Int, _ end: End) {
        state.withLock { $0.entries.append(.end(id, attempt: attempt, end)) }
    }

    func markStopped() { state.withLock { $0.stopped = true } }

    var entries: [Entry] { state.withLock { $0.entries } }

    /// How many entries there are: a position to compare later begins with.
    var count: Int { state.withLock { $0.entries.count } }

    func begins(of id: String, from position: Int = 0) -> Int {
        entries.dropFirst(position).count { if case .begin(id, _, _, _) = $0 { true } else { false } }
    }

    /// The attempt numbers of `id`'s begins, in order.
    func attempts(of id: String) -> [Int] {
        entries.compactMap { if case .begin(id, let attempt, _, _) = $0 { attempt } else { nil } }
    }

    func ends(of id: String) -> [End] {
        entries.compactMap { if case .end(id, _, let end) = $0 { end } else { nil } }
    }

    /// How attempt `attempt` of `id` ended, if it did.
    func end(of id: String, attempt: Int) -> End? {
        entries.lazy.compactMap { entry -> End? in
            guard case .end(id, attempt, let end) = entry else { return nil }
            return end
        }.first
    }

    var beginOrder: [String] {
        entries.compactMap { if case .begin(let id, _, _, _) = $0 { id } else { nil } }
    }

    /// The bodies that began after `markStopped()`, as `id#attempt`.
    var beginsAfterStop: [String] {
        entries.compactMap { entry in
            guard case .begin(let id, let attempt, true, _) = entry else { return nil }
            return "\(id)#\(attempt)"
        }
    }

    /// The bodies that began after `markStopped()` without seeing their task cancelled.
    var uncancelledBeginsAfterStop: [String] {
        entries.compactMap { entry in
            guard case .begin(let id, let attempt, true, false) = entry else { return nil }
            return "\(id)#\(attempt)"
        }
    }

    /// The attempt numbers of `id`'s begins from `position` on.
    func attempts(of id: String, from position: Int) -> [Int] {
        entries.dropFirst(position).compactMap { if case .begin(id, let attempt, _, _) = $0 { attempt } else { nil } }
    }
}
