/// A run's events as the engine records them: a few bytes each, holding a node's position
/// rather than its id, and turned into ``GraphEvent``s only when someone reads them.
///
/// Three events per task (queued, started, ended) used to be enums holding the task's id
/// `String`, built, copied into the journal and destroyed even when nobody listened. The
/// common ones are now plain values; the rare ones (failures, retries, skips, stages,
/// milestones, the run's end) keep their full event in a box.
enum GraphEventRecord: Sendable {
    case queued(node: Int32, at: Duration)
    case started(node: Int32, attempt: Int32, at: Duration)
    case succeeded(node: Int32, at: Duration)
    case cancelled(node: Int32, at: Duration)
    case other(Box)

    /// A rare event, whole.
    final class Box: Sendable {
        let event: GraphEvent
        init(_ event: GraphEvent) { self.event = event }
    }

    static func other(_ event: GraphEvent) -> GraphEventRecord { .other(Box(event)) }
}

/// The journal of one run (or one launcher) and the node ids its records point into.
///
/// Readers materialize each batch under the ids' lock; the engine only appends to the
/// journal and, when nodes are added, registers their definitions (the arrays the run
/// already holds, so nothing is copied per task).
final class GraphEventLog: Sendable {
    let records = EventJournal<GraphEventRecord>(retention: .everything)
    /// Definitions in chunks, as they were added: `first` is the position of a chunk's first node.
    private let definitions = Lock<[(first: Int, definitions: [NodeDefinition])]>([])

    init() {}

    /// Makes the nodes of `definitions`, the first of them at position `first`, readable by name.
    func register(_ definitions: [NodeDefinition], from first: Int) {
        guard !definitions.isEmpty else { return }
        self.definitions.withLock { $0.append((first, definitions)) }
    }

    var events: EventSequence<GraphEvent> { EventSequence(source: self, startIndex: 0) }

    /// Every event so far.
    var snapshot: [GraphEvent] { materialize(records.snapshot) }

    func finish() -> EventJournal<GraphEventRecord>.Wakeup { records.finish() }

    private func materialize(_ batch: [GraphEventRecord]) -> [GraphEvent] {
        guard !batch.isEmpty else { return [] }
        return definitions.withLock { chunks in
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
                switch record {
                case .queued(let node, let at): .taskQueued(id(node), at: at)
                case .started(let node, let attempt, let at): .taskStarted(id(node), attempt: Int(attempt), at: at)
                case .succeeded(let node, let at): .taskSucceeded(id(node), at: at)
                case .cancelled(let node, let at): .taskCancelled(id(node), at: at)
                case .other(let box): box.event
                }
            }
        }
    }
}

extension GraphEventLog: EventBatchSource {
    func batch(
        from index: inout Int, limit: Int, isolation: isolated (any Actor)?
    ) async -> [GraphEvent] {
        materialize(await records.batch(from: &index, limit: limit, isolation: isolation))
    }
}
