/// A run's events as the engine records them: 16 bytes of plain integers each, holding a
/// node's position rather than its id, and turned into ``GraphEvent``s only when someone
/// reads them.
///
/// Three records per task (queued, started, ended) are appended on the hot path, so a
/// record is a trivial value: copying one is a `memcpy`, destroying one is nothing. The rare
/// events (failures, retries, skips, stages, milestones, the run's end) carry errors and
/// names; they go whole into the run's side table and the record keeps their position there.
struct GraphEventRecord: Sendable {
    enum Kind: Equatable {
        case queued
        case started(attempt: Int32)
        case succeeded
        case cancelled
        /// A rare event, at this position in the log's side table.
        case other
    }

    /// Nanoseconds since the run started.
    let time: Int64
    /// The node; for a rare event, its position in the side table.
    let subject: Int32
    /// An attempt number (≥ 1) for `started`; one of the negative codes below otherwise.
    private let code: Int32

    private static let queuedCode: Int32 = 0
    private static let succeededCode: Int32 = -1
    private static let cancelledCode: Int32 = -2
    private static let otherCode: Int32 = -3

    private init(time: Int64, subject: Int32, code: Int32) {
        self.time = time
        self.subject = subject
        self.code = code
    }

    static func queued(node: Int32, at time: Int64) -> Self { Self(time: time, subject: node, code: queuedCode) }
    static func started(node: Int32, attempt: Int32, at time: Int64) -> Self {
        Self(time: time, subject: node, code: max(1, attempt))
    }
    static func succeeded(node: Int32, at time: Int64) -> Self { Self(time: time, subject: node, code: succeededCode) }
    static func cancelled(node: Int32, at time: Int64) -> Self { Self(time: time, subject: node, code: cancelledCode) }
    /// The rare event at `position` in the run's side table of rare events.
    static func other(_ position: Int32) -> Self { Self(time: 0, subject: position, code: otherCode) }

    var kind: Kind {
        switch code {
        case Self.queuedCode: .queued
        case Self.succeededCode: .succeeded
        case Self.cancelledCode: .cancelled
        case Self.otherCode: .other
        default: .started(attempt: code)
        }
    }
}

/// The events of a launcher, which readers may ask for before its launch — and the run that
/// records them — exists: they wait here until the launch starts (``attach(_:)``), then read
/// the run's journal, or get the end at once if the launcher is released without starting
/// (``finishUnattached()``). A plain graph run's readers read its storage directly.
///
/// It keeps no events, so it is no second journal beside the run's `JournalBuffer`: it only
/// gives a launcher's readers somewhere to wait before the run that journals exists.
package final class GraphEventLog: Sendable {
    /// The run whose journal holds the events; `nil` if the launch never started.
    private let source = OnceCell<GraphRunStorage?>()

    package init() {}

    /// The launch has started: its run's journal is this log's from now on.
    package func attach(_ storage: GraphRunStorage) {
        source.settle(storage)
    }

    /// The launcher is gone without having started: readers get the end of the sequence.
    package func finishUnattached() {
        source.settle(nil)
    }

    package var events: EventSequence<GraphEvent> { EventSequence(source: self, startIndex: 0) }
}

extension GraphEventLog: EventBatchSource {
    package func batch(
        from index: inout Int, limit: Int, isolation: isolated (any Actor)?
    ) async -> [GraphEvent] {
        // `nil` twice over: the waiting task was cancelled, or the launch never started.
        guard let storage = await source.wait() ?? nil else { return [] }
        return await storage.batch(from: &index, limit: limit, isolation: isolation)
    }
}

extension GraphEventRecord {
    /// The events `records` stand for: `definitions` names the nodes, `rare` holds the rare
    /// events by position (both as the run holds them, taken after the records were read:
    /// both only grow, so they hold everything the records name).
    static func materialize(
        _ records: [GraphEventRecord], definitions: [NodeDefinition], rare: [GraphEvent]
    ) -> [GraphEvent] {
        records.map { record in
            let at = Duration.nanoseconds(record.time)
            switch record.kind {
            case .queued: return .taskQueued(definitions[Int(record.subject)].id, at: at)
            case .started(let attempt):
                return .taskStarted(definitions[Int(record.subject)].id, attempt: Int(attempt), at: at)
            case .succeeded: return .taskSucceeded(definitions[Int(record.subject)].id, at: at)
            case .cancelled: return .taskCancelled(definitions[Int(record.subject)].id, at: at)
            case .other: return rare[Int(record.subject)]
            }
        }
    }
}
