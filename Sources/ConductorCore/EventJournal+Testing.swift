extension EventJournal {
    /// Whether a reader is parked waiting for the next event (for tests).
    package var hasParkedReaders: Bool { state.withLock { !$0.readers.isEmpty } }
}
