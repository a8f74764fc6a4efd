extension EventJournal {
    /// Delivers every event from `index` on to `handler` on `target`, a batch per hop, in
    /// order, until the journal finishes or the returned task is cancelled.
    @discardableResult
    package func deliver(
        from index: Int,
        on target: CallbackTarget,
        _ handler: @escaping @Sendable ([Event]) -> Void
    ) -> Task<Void, Never> {
        Task {
            var index = index
            while true {
                let batch = await self.batch(from: &index)
                if batch.isEmpty { return }
                await target.perform { handler(batch) }
            }
        }
    }
}
