extension TaskLimit {
    /// Places held now, and requests waiting.
    package var snapshot: (inUse: Int, waiting: Int) {
        state.withLock { ($0.inUse, $0.waiting) }
    }
}
