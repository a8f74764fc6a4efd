import Conductor
import ConductorCore
import Foundation
import Testing

@testable import ConductorJobs

/// The queue's in-memory state machine, with no concurrency: how a claim, a cancel and the
/// dispatcher's add meet, whichever comes first.
struct JobQueueStateTests {
    private func claimed(_ id: Int64, delivery: Int = 1) -> ClaimedJob {
        ClaimedJob(
            id: JobID(rawValue: id), kind: "echo", payload: Data(), idempotencyKey: "key", delivery: delivery,
            attemptsBefore: delivery - 1, priority: .medium, retry: .never, timeout: nil)
    }

    /// An open run with nothing in it, cancelled when `body` returns.
    private func withRun(_ body: (GraphRun) throws -> Void) throws {
        let run = try TaskGraph().start(staysOpen: true)
        defer { run.cancel() }
        try body(run)
    }

    @Test func aCancelBeforeTheAddIsFlaggedAndTheAddRefused() throws {
        try withRun { run in
            var state = JobQueueState()
            state.claimed([claimed(1)])
            let action = state.requestCancel(JobID(rawValue: 1))
            #expect(action == .flagged)
            let added = state.markAdded(JobID(rawValue: 1), to: run)
            #expect(!added)
            #expect(state.runJobs == 0)
        }
    }

    @Test func aCancelAfterTheAddRemovesTheDeliverysTaskFromItsRun() throws {
        try withRun { run in
            var state = JobQueueState()
            state.phase = .started(run)
            state.claimed([claimed(1, delivery: 2)])
            let added = state.markAdded(JobID(rawValue: 1), to: run)
            #expect(added && state.runJobs == 1)
            // The run fills up and is replaced: the cancel still goes to the run the task is in.
            try withRun { fresh in
                #expect(state.replaceRun(with: fresh) === run)
                #expect(state.run === fresh && state.runJobs == 0 && state.retiringRuns.count == 1)
                let action = state.requestCancel(JobID(rawValue: 1))
                #expect(action == .remove(taskID: "echo-1#2", from: run))
                #expect(action != .remove(taskID: "echo-1#2", from: fresh))
                state.retired(run)
                #expect(state.retiringRuns.isEmpty)
            }
            #expect(state.running[JobID(rawValue: 1)]?.attempt == 2)
        }
    }

    @Test func aRunIsNotReplacedOnceTheQueueHasShutDown() throws {
        try withRun { fresh in
            var state = JobQueueState()
            state.phase = .shutDown
            #expect(state.replaceRun(with: fresh) == nil)
            #expect(state.retiringRuns.isEmpty)
        }
    }

    @Test func aJobNotClaimedHereIsNotRunning() {
        var state = JobQueueState()
        let before = state.requestCancel(JobID(rawValue: 9))
        #expect(before == .notRunning)
        state.claimed([claimed(9)])
        _ = state.ended([JobID(rawValue: 9)])
        let after = state.requestCancel(JobID(rawValue: 9))
        #expect(after == .notRunning)
    }

    @Test func aWakeWithNobodyWaitingIsKeptForTheNextWait() {
        var state = JobQueueState()
        #expect(!state.wakePending)
        let woken = state.wake()
        #expect(woken.isEmpty && state.wakePending)
        let generation = state.endGeneration
        let waiters = state.jobsEnded()
        #expect(waiters.isEmpty)
        #expect(state.endGeneration == generation &+ 1 && state.wakePending)
    }

    @Test func aKindRegisteredTwiceIsRememberedAndTheFirstKept() {
        var state = JobQueueState()
        state.register(RegisteredKind { _ in { _ in } }, named: "echo")
        state.register(RegisteredKind { _ in { _ in } }, named: "echo")
        state.register(RegisteredKind { _ in { _ in } }, named: "other")
        #expect(state.duplicateKind == "echo" && state.kinds.count == 2)
    }
}
