/// A journal's events and parked readers as a value, for a primitive that keeps its journal
/// under its own one lock: an event is then appended in the same critical section as the
/// transition that caused it, so the journal's order is the transitions' order, and no second
/// lock is taken while the first is held. The gate, the graph and the harmonizer each keep
/// theirs this way; the graph's records are compact `GraphEventRecord`s turned into events
/// when read, and a launcher's `GraphEventLog` only forwards its readers to its run's.
///
/// Appending never resumes a reader: it returns the readers to resume once the lock is
/// released. ``Lock/batch(from:limit:journal:)`` reads it.
///
/// ```swift
/// struct State { var machine: Machine; var journal = JournalBuffer<Event>(keepingNewest: 1_000) }
/// let readers = state.withLock { state in
///     let event = state.machine.advance()
///     return state.journal.append(event)
/// }
/// for reader in readers { reader.resume(returning: ()) }
/// ```
@usableFromInline package struct JournalBuffer<Event: Sendable>: Sendable {
    /// The events, oldest first, from `head` on: a plain array, since a run appends a few
    /// events per task and an array's append is the cheapest there is. A journal that keeps
    /// the newest `limit` events moves `head` past the oldest and compacts once the dropped
    /// ones are as many as the kept ones, so each event is moved at most about once.
    @usableFromInline var storage: [Event] = []
    /// The position in `storage` of the oldest retained event.
    @usableFromInline var head = 0
    /// The absolute index of the oldest retained event.
    @usableFromInline var firstIndex = 0
    /// `nil`: keep everything.
    @usableFromInline let limit: Int?
    @usableFromInline package private(set) var isFinished = false
    @usableFromInline var readers = WaiterSet<Void>()

    /// A journal that keeps the newest `limit` events (`nil`: every event).
    @inlinable package init(keepingNewest limit: Int?) {
        self.limit = limit.map { max(0, $0) }
    }

    /// The absolute index just past the newest event: how many were ever appended.
    @inlinable package var endIndex: Int { firstIndex + storage.count - head }

    /// Readers parked for the next event (for tests).
    @inlinable package var parkedReaderCount: Int { readers.count }

    /// Every retained event, oldest first.
    @inlinable package var snapshot: [Event] { Array(storage[head...]) }

    /// Appends `events` in order (none after ``finish()``); returns the readers to resume.
    @inlinable package mutating func append(contentsOf newEvents: some Collection<Event>) -> [WaiterSet<Void>.Waiter] {
        guard !isFinished, !newEvents.isEmpty else { return [] }
        storage.append(contentsOf: newEvents)
        if let limit { dropOldest(keeping: limit) }
        return readers.isEmpty ? [] : readers.removeAll()
    }

    /// Makes room for `count` more events, so a journal whose size its owner can foresee (a
    /// graph run records about three events a task) grows once, not a doubling at a time with
    /// every event copied again. A journal that keeps only the newest events ignores it.
    @inlinable package mutating func reserveCapacity(forAnother count: Int) {
        guard limit == nil, count > 0 else { return }
        storage.reserveCapacity(growingToHold: storage.count + count)
    }

    /// Makes room for `count` more events; when they do not fit, for `planned` more at once (an
    /// owner that knows how many it may still record: a graph run, three a task yet to end), so
    /// the journal is copied once then instead of at every doubling, and holds no room for
    /// events long before they come. A journal that keeps only the newest events ignores it.
    @inlinable package mutating func makeRoom(for count: Int, planning planned: Int) {
        guard storage.count + count > storage.capacity, limit == nil else { return }
        storage.reserveCapacity(storage.count + Swift.max(count, planned))
    }

    /// Appends one event (none after ``finish()``) and leaves its readers parked: an owner
    /// that appends several in one critical section takes them once at its end with
    /// ``takeReaders(ifGrownFrom:)``, and pays nothing per event for readers it does not have.
    @inlinable package mutating func append(_ event: Event) {
        guard !isFinished else { return }
        storage.append(event)
        if let limit { dropOldest(keeping: limit) }
    }

    /// Appends `newEvents` in order (none after ``finish()``) and leaves the readers parked, as
    /// ``append(_:)`` does: one capacity and uniqueness check for all of them, not one each.
    @inlinable package mutating func appendLeavingReaders(contentsOf newEvents: some Collection<Event>) {
        guard !isFinished else { return }
        storage.append(contentsOf: newEvents)
        if let limit { dropOldest(keeping: limit) }
    }

    @inlinable mutating func dropOldest(keeping limit: Int) {
        let excess = storage.count - head - limit
        guard excess > 0 else { return }
        head += excess
        firstIndex += excess
        if head >= max(limit, 16) {
            storage.removeFirst(head)
            head = 0
        }
    }

    /// Ends the journal: readers get what is left, then the end. Returns the readers to resume.
    @inlinable package mutating func finish() -> [WaiterSet<Void>.Waiter] {
        isFinished = true
        return readers.removeAll()
    }

    /// Ends the journal and leaves its readers parked, for ``takeReaders(ifGrownFrom:)``.
    @inlinable package mutating func finishLeavingReaders() {
        isFinished = true
    }

    /// The parked readers, if the journal has grown past `endIndex` (a value of ``endIndex``
    /// read earlier in the same critical section) or finished; `nil` otherwise — nothing to
    /// read yet, so they stay parked. Resume them once the lock is released.
    @inline(__always)
    @inlinable package mutating func takeReaders(ifGrownFrom endIndex: Int) -> [WaiterSet<Void>.Waiter]? {
        guard !readers.isEmpty, isFinished || self.endIndex != endIndex else { return nil }
        return readers.removeAll()
    }

    /// Whether a read from `index` returns at once (events, or the end).
    @inlinable func hasEvents(from index: Int) -> Bool {
        isFinished || max(index, firstIndex) < endIndex
    }

    /// The events from `index` on (at most `limit`), advancing `index`; `nil` when there are
    /// none yet and the journal goes on.
    @inlinable package func read(from index: inout Int, limit: Int) -> [Event]? {
        if index < firstIndex { index = firstIndex }
        if index < endIndex {
            let start = head + index - firstIndex
            let end = start + min(storage.count - start, limit)
            index += end - start
            return Array(storage[start..<end])
        }
        return isFinished ? [] : nil
    }
}

extension Lock where Value: ~Copyable {
    /// The events of the journal at `journal` from `index` on, waiting until there is at
    /// least one; empty once the journal has finished and everything was read, or when the
    /// waiting task is cancelled. Appends under this lock wake it. `whenParked` runs, outside
    /// the lock, each time the reader has parked: a test's way to act only once a reader waits.
    @inlinable package borrowing func batch<Event: Sendable>(
        from index: inout Int,
        limit: Int,
        journal: any WritableKeyPath<Value, JournalBuffer<Event>> & Sendable,
        whenParked: (() -> Void)? = nil
    ) async -> [Event] {
        while true {
            let read = withLock { value -> [Event]? in value[keyPath: journal].read(from: &index, limit: limit) }
            if let read { return read }
            if Task.isCancelled { return [] }
            let next = index
            // Parks only while there is still nothing to read; any append or the end lets it go.
            await suspend(
                { (value: inout Value, waiter: WaiterSet<Void>.Waiter) -> SuspensionDecision<Void, Bool> in
                    if value[keyPath: journal].hasEvents(from: next) { return .resume((), false) }
                    value[keyPath: journal].readers.insert(waiter)
                    return .wait(true)
                },
                cancelledNow: { _ in ((), false) },
                perform: { parked in if parked { whenParked?() } },
                cancelled: { @Sendable value, id in
                    guard let waiter = value[keyPath: journal].readers.remove(id) else { return nil }
                    return { waiter.resume(returning: ()) }
                })
            if Task.isCancelled { return [] }
        }
    }
}
