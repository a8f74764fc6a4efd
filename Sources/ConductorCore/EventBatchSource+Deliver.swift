extension EventBatchSource {
    /// Delivers every event from `index` on to `handler` on `target`, a batch per hop, in
    /// order, until the journal finishes or the returned handle is cancelled (checked before
    /// each event, so cancelling from inside `handler` stops the rest of its batch too).
    ///
    /// The delivery task holds the journal, not its owner: the owner must finish the journal
    /// when nothing else will (a launcher released before it started does, in `deinit`).
    @discardableResult
    package func deliver(
        from index: Int,
        on target: CallbackTarget,
        _ handler: @escaping @Sendable (Element) -> Void
    ) -> ObservationHandle {
        let stopped = ObservationHandle.Flag()
        let task = Task(executorPreference: TaskPlacement.executor) {
            var index = index
            while !stopped.isSet {
                let batch = await self.batch(from: &index, limit: .max, isolation: nil)
                if batch.isEmpty { return }
                await target.perform {
                    for event in batch {
                        guard !stopped.isSet else { return }
                        handler(event)
                    }
                }
            }
        }
        return ObservationHandle(task: task, stopped: stopped)
    }
}
