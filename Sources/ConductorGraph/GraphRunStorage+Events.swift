extension GraphRunStorage: EventBatchSource {
    /// The run's events from `index` on, waiting until there is at least one: the records
    /// are read under the run's lock, and turned into events after it is released.
    package func batch(
        from index: inout Int, limit: Int, isolation: isolated (any Actor)?
    ) async -> [GraphEvent] {
        let records = await state.batch(from: &index, limit: limit, journal: \.journal)
        guard !records.isEmpty else { return [] }
        let (definitions, rare) = state.withLock { ($0.definitions, $0.rareEvents) }
        return GraphEventRecord.materialize(records, definitions: definitions, rare: rare)
    }

    var events: EventSequence<GraphEvent> { EventSequence(source: self, startIndex: 0) }

    /// How many events the run has recorded so far.
    var recordedEventCount: Int { state.withLock { $0.journal.endIndex } }
}
