import Conductor
import Synchronization

/// Records every outcome a completion or observer receives, so a test can await the first
/// one and then check that no second one came.
final class OutcomeRecorder: Sendable {
    private let outcomes = Lock<[Harmonizer.Outcome]>([])
    private let stream: AsyncStream<Harmonizer.Outcome>
    private let continuation: AsyncStream<Harmonizer.Outcome>.Continuation

    init() {
        (stream, continuation) = AsyncStream.makeStream()
    }

    /// The callback to hand to a harmonizer or registry.
    var record: @Sendable (Harmonizer.Outcome) -> Void {
        { [self] outcome in
            outcomes.withLock { $0.append(outcome) }
            continuation.yield(outcome)
        }
    }

    /// Every outcome received so far.
    var received: [Harmonizer.Outcome] { outcomes.withLock { $0 } }

    /// Waits for the next outcome.
    func next() async -> Harmonizer.Outcome? {
        var iterator = stream.makeAsyncIterator()
        return await iterator.next()
    }
}

extension Harmonizer.Outcome {
    var isCompleted: Bool {
        if case .completed = self { return true }
        return false
    }

    var isCancelled: Bool {
        if case .cancelled = self { return true }
        return false
    }

    /// The missing participants if it timed out, `nil` otherwise.
    var missing: [String]? {
        if case .timedOut(_, let missing) = self { return missing }
        return nil
    }
}
