/// A run's events as the engine records them: 16 bytes of plain integers each, holding a
/// node's position rather than its id, and turned into ``GraphEvent``s only when someone
/// reads them.
///
/// Three records per task (queued, started, ended) are appended on the hot path, so a
/// record is a trivial value: copying one is a `memcpy`, destroying one is nothing. The rare
/// events (failures, retries, skips, stages, milestones, the run's end) carry errors and
/// names; they go whole into the log's side table and the record keeps their position there.
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
    private(set) var subject: Int32
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
    /// The rare event at `position` among those produced by the same transitions; the log
    /// moves it to its own side table's numbering when it takes the records.
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

    var isOther: Bool { code == Self.otherCode }

    mutating func offsetRarePosition(by base: Int32) { subject += base }
}

/// The journal of one run (or one launcher) and what its records point into: the node ids
/// and the rare events.
///
/// Readers materialize each batch under the side tables' lock; the engine only appends to
/// the journal and, when nodes are added, registers their definitions (the arrays the run
/// already holds, so nothing is copied per task).
///
/// While no reader is parked, the engine holds a run's common records back in its outbox and
/// appends them in batches; a reader asks it to hand them over (``setFlusher(_:)``) before it
/// reads and again once it has parked, so every reader sees every record, in order.
final class GraphEventLog: Sendable {
    let records = EventJournal<GraphEventRecord>(retention: .everything)

    private struct Tables {
        /// Definitions in chunks, as they were added: `first` is the position of a chunk's first node.
        var definitions: [(first: Int, definitions: [NodeDefinition])] = []
        /// The rare events, whole, in the order they were appended.
        var rare: [GraphEvent] = []
    }

    private let tables = Lock(Tables())
    private let flusher = Lock<(@Sendable () -> Void)?>(nil)

    init() {}

    /// What hands over the records the engine holds back: called before every read and
    /// whenever a reader parks; `nil` once the engine holds nothing back any more.
    func setFlusher(_ flush: (@Sendable () -> Void)?) {
        flusher.withLock { $0 = flush }
    }

    private func flush() {
        flusher.withLock { $0 }?()
    }

    /// Makes the nodes of `definitions`, the first of them at position `first`, readable by name.
    func register(_ definitions: [NodeDefinition], from first: Int) {
        guard !definitions.isEmpty else { return }
        tables.withLock { $0.definitions.append((first, definitions)) }
    }

    /// Appends records and the rare events they name (`.other(i)` is `rare[i]`), in order.
    /// Resume the returned wakeup after releasing your own locks.
    func append(
        _ batch: inout [GraphEventRecord], rare: inout [GraphEvent]
    ) -> EventJournal<GraphEventRecord>.Wakeup {
        if !rare.isEmpty {
            let base = tables.withLock { tables in
                let base = Int32(truncatingIfNeeded: tables.rare.count)
                tables.rare.append(contentsOf: rare)
                return base
            }
            rare.removeAll(keepingCapacity: true)
            if base != 0 {
                for position in batch.indices where batch[position].isOther {
                    batch[position].offsetRarePosition(by: base)
                }
            }
        }
        return records.append(contentsOf: batch)
    }

    var events: EventSequence<GraphEvent> { EventSequence(source: self, startIndex: 0) }

    /// Every event so far.
    var snapshot: [GraphEvent] {
        flush()
        return materialize(records.snapshot)
    }

    func finish() -> EventJournal<GraphEventRecord>.Wakeup { records.finish() }

    private func materialize(_ batch: [GraphEventRecord]) -> [GraphEvent] {
        guard !batch.isEmpty else { return [] }
        return tables.withLock { tables in
            let chunks = tables.definitions
            func id(_ node: Int32) -> String {
                let position = Int(node)
                // The last chunk whose first position is at or before the node.
                var low = 0
                var high = chunks.count - 1
                while low < high {
                    let middle = (low + high + 1) / 2
                    if chunks[middle].first <= position { low = middle } else { high = middle - 1 }
                }
                return chunks[low].definitions[position - chunks[low].first].id
            }
            return batch.map { record in
                let at = Duration.nanoseconds(record.time)
                switch record.kind {
                case .queued: return .taskQueued(id(record.subject), at: at)
                case .started(let attempt): return .taskStarted(id(record.subject), attempt: Int(attempt), at: at)
                case .succeeded: return .taskSucceeded(id(record.subject), at: at)
                case .cancelled: return .taskCancelled(id(record.subject), at: at)
                case .other: return tables.rare[Int(record.subject)]
                }
            }
        }
    }
}

extension GraphEventLog: EventBatchSource {
    func batch(
        from index: inout Int, limit: Int, isolation: isolated (any Actor)?
    ) async -> [GraphEvent] {
        flush()
        return materialize(
            await records.batch(from: &index, limit: limit, isolation: isolation) { [weak self] in self?.flush() }
        )
    }
}
