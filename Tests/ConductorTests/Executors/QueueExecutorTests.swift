import Conductor
import Dispatch
import Synchronization
import Testing

private actor Counter: Schedulable {
    nonisolated let executor: QueueExecutor
    private(set) var values: [Int] = []

    init(executor: QueueExecutor) { self.executor = executor }

    func append(_ value: Int) { values.append(value) }

    func ranOnExecutor() -> Bool { executor.isCurrent }
}

private struct Refused: Error, Equatable {}

/// Runs `body` with executor-check failures recorded instead of crashing; returns them.
private func recordingFailures<Result>(_ body: () throws -> Result) rethrows -> (Result, [String]) {
    let messages = Lock<[String]>([])
    let handler: @Sendable (String) -> Void = { message in messages.withLock { $0.append(message) } }
    let result = try IsolationFailure.$handler.withValue(handler, operation: body)
    return (result, messages.withLock { $0 })
}

private final class Tally {
    var count = 0
}

@Suite struct QueueExecutorTests {
    // MARK: - Binding

    @Test func actorMethodsRunOnTheBoundQueue() async {
        let executor = QueueExecutor(label: "counter")
        let counter = Counter(executor: executor)
        #expect(await counter.ranOnExecutor())
        #expect(!executor.isCurrent)
    }

    @Test func legacyCallbackOnTheQueueStepsIntoTheActorWithoutAHop() async {
        let executor = QueueExecutor(label: "legacy")
        let counter = Counter(executor: executor)
        let ran: Bool = await withCheckedContinuation { continuation in
            executor.queue.async {
                counter.assumeOnExecutor { counter in counter.append(7) }
                continuation.resume(returning: counter.assumeOnExecutor { $0.values == [7] })
            }
        }
        #expect(ran)
    }

    @Test func anExistingQueueCanBeWrapped() async {
        let queue = DispatchQueue(label: "existing")
        let executor = QueueExecutor(queue: queue)
        #expect(executor.label == "existing")
        let onIt: Bool = await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: executor.isCurrent) }
        }
        #expect(onIt)
    }

    @MainActor @Test func theMainExecutorRecognisesMainActorCode() {
        #expect(QueueExecutor.main.isCurrent)
    }

    @Test func theMainExecutorIsNotCurrentOnAnotherQueue() async {
        let onMain: Bool = await withCheckedContinuation { continuation in
            DispatchQueue(label: "elsewhere").async { continuation.resume(returning: QueueExecutor.main.isCurrent) }
        }
        #expect(!onMain)
    }

    // MARK: - schedule and scheduleBlock

    @Test func scheduleReturnsTheValueAndRethrows() async throws {
        let counter = Counter(executor: QueueExecutor(label: "schedule"))
        let count = await counter.schedule { counter in
            counter.append(1)
            return counter.values.count
        }
        #expect(count == 1)
        await #expect(throws: Refused()) {
            try await counter.schedule { _ throws(Refused) in throw Refused() }
        }
    }

    @Test func scheduledBlocksRunInOrderOnTheExecutor() async {
        let counter = Counter(executor: QueueExecutor(label: "blocks"))
        for value in 0..<200 {
            counter.scheduleBlock { counter in counter.append(value) }
        }
        #expect(await counter.values == Array(0..<200))
    }

    /// More jobs than one drain batch: the executor must carry on draining after yielding the queue.
    @Test func manyConcurrentCallsAllRun() async {
        let counter = Counter(executor: QueueExecutor(label: "busy"))
        await withTaskGroup(of: Void.self) { group in
            for value in 0..<500 {
                group.addTask { await counter.append(value) }
            }
        }
        #expect(await counter.values.sorted() == Array(0..<500))
    }

    @Test func confinedValueIsUsableOnItsExecutor() async {
        let executor = QueueExecutor(label: "confined")
        let tally = Confined(Tally(), on: executor)
        let count = await tally.schedule { tally in
            tally.count += 2
            return tally.count
        }
        #expect(count == 2)
        let direct: Int = await withCheckedContinuation { continuation in
            executor.queue.async { continuation.resume(returning: tally.withValue { $0.count }) }
        }
        #expect(direct == 2)
    }

    // MARK: - Wrong-executor access

    /// The checks report through `IsolationFailure`, whose handler a test replaces, so the
    /// failure is observed instead of crashing the runner.
    @Test func confinedAccessOffItsExecutorIsCaught() {
        let tally = Confined(Tally(), on: QueueExecutor(label: "background"))
        let (_, reported) = recordingFailures { tally.withValue { $0.count } }
        #expect(reported.count == 1)
        #expect(reported.first?.contains("Confined<Tally>") == true)
        #expect(reported.first?.contains("QueueExecutor 'background'") == true)
    }

    @Test func boundActorCalledOffItsExecutorIsCaught() async {
        let counter = Counter(executor: QueueExecutor(label: "db"))
        let (values, reported) = recordingFailures { counter.assumeOnExecutor { $0.values } }
        #expect(values.isEmpty)
        #expect(reported.count == 1)
        #expect(reported.first?.contains("Counter") == true)
        #expect(reported.first?.contains("QueueExecutor 'db'") == true)
    }

    @Test func isolationCheckOffTheQueueNamesTheExecutor() {
        let executor = QueueExecutor(label: "network")
        let (_, reported) = recordingFailures {
            executor.checkIsolated()
            executor.queue.sync { executor.checkIsolated() }
        }
        #expect(reported == ["expected to run on QueueExecutor 'network', but runs elsewhere"])
        #expect(executor.isIsolatingCurrentContext() == false)
    }
}
