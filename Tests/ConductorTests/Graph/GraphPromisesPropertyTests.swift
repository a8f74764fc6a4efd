import ConductorTestKit
import Synchronization
import Testing

@testable import ConductorAssembly
@testable import ConductorCore
@testable import ConductorGate
@testable import ConductorGraph
@testable import ConductorHarmonizer
@testable import ConductorLaunch
@testable import ConductorReports

/// The two promises beyond "every task ends once", over random graphs with failures,
/// retries with tiny backoffs, timeouts, removals and a cancel at a random moment, on a
/// manual clock driven by the shared driver:
/// 1. Nothing starts after the run has stopped: no attempt begins after the stop (a required
///    failure or timeout, or `cancel()`), and every body that ran had won its start.
/// 2. The report agrees with what the body did: a body that ran on a worker (no timeout) and
///    returned is never reported cancelled, unless a removal that answered `stillRunning`
///    cancelled it (the task then ends cancelled and removed, whatever its body did); `remove`
///    returning `prevented` means no body ran after it; `report()` returns only once every such
///    body has returned; in a run that completed, no body on a worker saw a cancellation that
///    no removal of its own task made (a removal's worker retires, its next task gets a fresh
///    one).
/// `CONDUCTOR_REPLAY=<seed> swift test --filter GraphPromisesPropertyTests` replays a failure.
// Serialized: at stress sizes, hundreds of cases at once would share two threads and each
// case's time limit would measure the crowd, not the case.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct GraphPromisesPropertyTests {
    private struct Fault: Error {}

    private enum Behaviour: CaseIterable { case succeeds, fails, failsOnce, sleeps }

    private struct BodyRun: Sendable {
        var id: String
        var attempt: Int
        var returned: Bool
    }

    @Test(arguments: StressConfiguration.seeds(default: 150, base: 0x9A0E_0001))
    func nothingStartsAfterTheStopAndReportsMatchBodies(seed: UInt64) async throws {
        var generator = SeededGenerator(seed: seed)
        let clock = ManualClock()
        let entered = Recorder<(id: String, attempt: Int)>()
        let finished = Recorder<BodyRun>()
        let inlineRunning = Atomic(0)
        var graph = TaskGraph()
        var ids: [String] = []
        var timed: Set<String> = []
        for index in 0..<Int.random(in: 3...25, using: &generator) {
            let id = "t\(index)"
            let dependencies = index == 0 ? [] : [ids.randomElement(using: &generator)!]
            let behaviour = Behaviour.allCases.randomElement(using: &generator)!
            let timeout: Duration? =
                Int.random(in: 0..<3, using: &generator) == 0
                ? .milliseconds(Int.random(in: 1...4, using: &generator)) : nil
            if timeout != nil { timed.insert(id) }
            let retry: RetryPolicy =
                Bool.random(using: &generator)
                ? .attempts(3, backoff: .milliseconds(1), maxBackoff: .milliseconds(2)) : .never
            let required = Int.random(in: 0..<5, using: &generator) == 0
            let runsInline = timeout == nil
            graph.add(
                id, dependsOn: .on(dependencies),
                options: TaskOptions(
                    timeout: timeout, retry: retry, failure: required ? .required : .optional,
                    whenDependencyFails: Bool.random(using: &generator) ? .runAnyway : .skip)
            ) { context in
                entered.append((id, context.attempt))
                if runsInline { inlineRunning.add(1, ordering: .relaxed) }
                defer { if runsInline { inlineRunning.subtract(1, ordering: .relaxed) } }
                do {
                    switch behaviour {
                    case .succeeds: break
                    case .fails: throw Fault()
                    case .failsOnce: if context.attempt == 1 { throw Fault() }
                    case .sleeps: try await clock.sleep(for: .milliseconds(2))
                    }
                } catch is CancellationError {
                    finished.append(BodyRun(id: id, attempt: context.attempt, returned: false))
                    throw CancellationError()
                }
                finished.append(BodyRun(id: id, attempt: context.attempt, returned: true))
            }
            ids.append(id)
        }
        let run = try graph.start(concurrencyLimit: Bool.random(using: &generator) ? 2 : nil, clock: clock)
        let reported = Atomic(false)
        let driver = Task {
            try await clock.advance(by: .milliseconds(1), until: { reported.load(ordering: .acquiring) })
        }
        // Removals and a cancel, at random points of the run.
        var removals: [(id: String, result: TaskRemoval, eventsBefore: Int)] = []
        var stoppedAt: Int?
        for _ in 0..<Int.random(in: 0...3, using: &generator) {
            for _ in 0..<Int.random(in: 0...3, using: &generator) { await Task.yield() }
            let target = ids.randomElement(using: &generator)!
            if let result = try? run.remove(target) { removals.append((target, result, run.eventsCount)) }
        }
        if Bool.random(using: &generator) {
            for _ in 0..<Int.random(in: 0...3, using: &generator) { await Task.yield() }
            run.cancel()
            stoppedAt = run.eventsCount
        }
        let report = try await run.report()
        let stillRunningInline = inlineRunning.load(ordering: .relaxed)
        reported.store(true, ordering: .releasing)
        clock.stateChanged()
        _ = try await driver.value
        let events = await run.events.collect()

        #expect(stillRunningInline == 0, "seed \(seed): report() returned while a worker's body still ran")
        // 1. Every body that ran had won its start, and nothing started after the stop.
        let startEvents = events.enumerated().compactMap { position, event -> (Int, String, Int)? in
            guard case .taskStarted(let id, let attempt, _) = event else { return nil }
            return (position, id, attempt)
        }
        for body in entered.all {
            #expect(
                startEvents.contains { $0.1 == body.id && $0.2 == body.attempt },
                "seed \(seed): \(body.id) attempt \(body.attempt) ran without a start event")
        }
        let requiredStop = events.firstIndex { event in
            switch event {
            case .taskFailed(let id, _, _), .taskTimedOut(let id, _), .taskSkipped(let id, _, _):
                isRequired(id, report)
            default: false
            }
        }
        if let stop = [stoppedAt, requiredStop].compactMap({ $0 }).min() {
            let late = startEvents.filter { $0.0 > stop }
            #expect(late.isEmpty, "seed \(seed): attempts started after the stop: \(late.map { "\($0.1)#\($0.2)" })")
        }
        // 2. What the report says agrees with what the bodies did.
        let cancelledWhileRunning = Set(removals.filter { $0.result == .stillRunning }.map(\.id))
        for record in report.tasks {
            let runs = finished.all.filter { $0.id == record.id }
            if "\(record.outcome)" == "cancelled", !timed.contains(record.id),
                !cancelledWhileRunning.contains(record.id),
                let last = runs.last, last.attempt == record.attempts, last.returned
            {
                Issue.record("seed \(seed): \(record.id)'s body returned on a worker, yet it was reported cancelled")
            }
            #expect(
                record.wasRemoved == removals.contains { $0.id == record.id && $0.result != .alreadyEnded },
                "seed \(seed): \(record.id) removed: \(record.wasRemoved)")
            if report.outcome == .completed, !timed.contains(record.id), !cancelledWhileRunning.contains(record.id) {
                // Only a cancellation makes a body here end without returning (`finished`).
                #expect(
                    runs.allSatisfy { $0.returned },
                    "seed \(seed): \(record.id)'s body on a worker was cancelled, yet no removal or stop did it")
            }
        }
        for removal in removals where removal.result == .stillRunning {
            #expect(
                "\(report[removal.id]!.outcome)" == "cancelled", "seed \(seed): \(removal.id) answered stillRunning")
        }
        // An attempt starts in the same transition that records its start event, so a
        // prevented task has no start event after the removal returned.
        for removal in removals where removal.result == .prevented {
            let late = startEvents.filter { $0.0 >= removal.eventsBefore && $0.1 == removal.id }
            #expect(late.isEmpty, "seed \(seed): remove(\(removal.id)) said prevented, yet an attempt started")
            #expect("\(report[removal.id]!.outcome)" == "cancelled", "seed \(seed)")
        }
    }

    /// Whether `id` is the required task whose failure, timeout or skip stopped the run: the
    /// run's outcome names it.
    private func isRequired(_ id: String, _ report: RunReport) -> Bool {
        if case .failed(let error) = report.outcome { return error.taskID == id }
        return false
    }
}

extension GraphRun {
    /// How many events the run has recorded so far.
    fileprivate var eventsCount: Int { storage.recordedEventCount }
}

extension EventSequence {
    fileprivate func collect() async -> [Element] {
        var all: [Element] = []
        for await element in self { all.append(element) }
        return all
    }
}
