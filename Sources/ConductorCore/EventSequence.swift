/// An asynchronous sequence of the events of a run, a gate, or any Conductor primitive.
///
/// Each sequence reads independently; iterating one does not consume events for others.
/// A sequence obtained from a finite run starts at the run's first event, however late
/// you ask for it, and ends when the run has finished:
///
/// ```swift
/// let run = try graph.start()
/// for await event in run.events {
///     print(event)
/// }
/// ```
///
/// Iteration ends early, returning `nil`, when the iterating task is cancelled.
public struct EventSequence<Element: Sendable>: AsyncSequence, Sendable {
    private let source: any EventBatchSource<Element>
    private let startIndex: Int

    package init(source: some EventBatchSource<Element>, startIndex: Int) {
        self.source = source
        self.startIndex = startIndex
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(source: source, index: startIndex)
    }

    /// Reads the events one by one, buffering those that arrived together.
    public struct Iterator: AsyncIteratorProtocol {
        private let source: any EventBatchSource<Element>
        private var index: Int
        private var buffer: [Element] = []
        private var position = 0

        fileprivate init(source: any EventBatchSource<Element>, index: Int) {
            self.source = source
            self.index = index
        }

        public mutating func next() async -> Element? {
            await next(isolation: nil)
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async -> Element? {
            if position < buffer.count {
                defer { position += 1 }
                return buffer[position]
            }
            buffer = await source.batch(from: &index, limit: .max, isolation: actor)
            position = 0
            guard !buffer.isEmpty else { return nil }
            position = 1
            return buffer[0]
        }
    }
}

/// Where an ``EventSequence`` reads its batches: the owner of a ``JournalBuffer`` (reading
/// it under its lock with ``Lock/batch(from:limit:journal:whenParked:)``, and turning compact
/// records into events as they are read, for a graph run), or a forwarder to one.
package protocol EventBatchSource<Element>: Sendable {
    associatedtype Element: Sendable
    /// The events from `index` on, waiting until there is at least one; empty once the
    /// source has finished and everything was read, or when the waiting task is cancelled.
    func batch(from index: inout Int, limit: Int, isolation: isolated (any Actor)?) async -> [Element]
}
