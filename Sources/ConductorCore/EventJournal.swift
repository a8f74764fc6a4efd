package import DequeModule

/// An append-only log of events that any number of readers consume at their own pace.
///
/// Every primitive funnels its transitions through one journal, so the public
/// `AsyncSequence`, delegate-style observers, traces and reports all see the same events
/// in the same order. A journal either keeps everything (a finite run, whose readers must
/// see it from the start however late they subscribe) or only the newest events (a
/// long-lived object such as a gate, whose memory must not grow).
///
/// Appending never resumes a reader under a lock: it returns the readers to wake, and the
/// caller calls ``Wakeup/resume()`` after releasing whatever lock it holds.
package final class EventJournal<Event: Sendable>: Sendable {
    package enum Retention: Sendable {
        /// Keep every event until the journal is released.
        case everything
        /// Keep the newest `count` events; a slow reader skips what was dropped.
        case newest(Int)
    }

    /// Readers to resume once the appender has released its locks.
    package struct Wakeup: Sendable {
        fileprivate var readers: [WaiterSet<Void>.Waiter] = []

        package static var none: Wakeup { Wakeup() }

        package func resume() {
            for reader in readers { reader.resume(returning: ()) }
        }

        package mutating func merge(_ other: Wakeup) {
            readers.append(contentsOf: other.readers)
        }
    }

    package struct State {
        package var events: Deque<Event> = []
        /// The absolute index of `events.first`.
        package var firstIndex = 0
        package var finished = false
        /// Readers parked until there is something past their index.
        package var readers = WaiterSet<Void>()
        /// For appends in numbered turns: the turn that goes in next, and those that arrived
        /// before their turn.
        package var nextTurn = 0
        package var early: [Int: Entry] = [:]

        package var endIndex: Int { firstIndex + events.count }

        package mutating func takeWaiters() -> Wakeup {
            guard !readers.isEmpty else { return .none }
            return Wakeup(readers: readers.removeAll())
        }
    }

    /// What a numbered turn brings: an event, or the end of the journal.
    package enum Entry {
        case event(Event)
        case finish
    }

    private func takeWaiters(_ state: inout State) -> Wakeup {
        state.takeWaiters()
    }

    private let retention: Retention
    /// Internal, not private, for `EventJournal+Testing.swift`.
    package let state = Lock(State())

    package init(retention: Retention) {
        self.retention = retention
    }

    /// Appends one event. Resume the returned wakeup after releasing your own locks.
    package func append(_ event: Event) -> Wakeup {
        state.withLock { state in
            guard !state.finished else { return .none }
            state.events.append(event)
            trim(&state)
            return takeWaiters(&state)
        }
    }

    /// Appends events in order. Resume the returned wakeup after releasing your own locks.
    package func append(contentsOf events: some Sequence<Event>) -> Wakeup {
        state.withLock { state in
            guard !state.finished else { return .none }
            state.events.append(contentsOf: events)
            trim(&state)
            return takeWaiters(&state)
        }
    }

    /// Ends the journal: readers get what is left and then the end of the sequence.
    package func finish() -> Wakeup {
        state.withLock { state in
            state.finished = true
            return takeWaiters(&state)
        }
    }

    /// Appends `event` in turn `turn`, where the appender numbers its events 0, 1, 2, … under
    /// its own lock and appends them after releasing it, so that two locks are never held
    /// together: an event that arrives before its turn waits, unseen, for those before it.
    /// Resume the returned wakeup. A journal is appended to either in turns or not at all.
    package func append(_ event: Event, turn: Int) -> Wakeup {
        enter(.event(event), turn: turn)
    }

    /// Ends the journal in turn `turn` (see ``append(_:turn:)``): after the events of the
    /// turns before it, whenever they arrive.
    package func finish(turn: Int) -> Wakeup {
        enter(.finish, turn: turn)
    }

    private func enter(_ entry: Entry, turn: Int) -> Wakeup {
        state.withLock { state in
            guard turn == state.nextTurn else {
                state.early[turn] = entry
                return .none
            }
            var next: Entry? = entry
            while let entry = next {
                switch entry {
                case .event(let event) where !state.finished: state.events.append(event)
                case .event: break
                case .finish: state.finished = true
                }
                state.nextTurn += 1
                // Nearly always empty: turns mostly arrive in order.
                next = state.early.isEmpty ? nil : state.early.removeValue(forKey: state.nextTurn)
            }
            trim(&state)
            return takeWaiters(&state)
        }
    }

    /// Every retained event, oldest first.
    package var snapshot: [Event] { state.withLock { Array($0.events) } }

    private func trim(_ state: inout State) {
        guard case .newest(let limit) = retention, state.events.count > limit else { return }
        let excess = state.events.count - limit
        state.events.removeFirst(excess)
        state.firstIndex += excess
    }

    /// The events from `index` on, waiting until there is at least one. Returns an empty
    /// batch when the journal has finished and everything was read, or when the waiting
    /// task is cancelled.
    package func batch(
        from index: inout Int,
        limit: Int = .max,
        isolation: isolated (any Actor)? = #isolation
    ) async -> [Event] {
        await batch(from: &index, limit: limit, isolation: isolation, whenParked: nil)
    }

    /// ``batch(from:limit:isolation:)``, with `whenParked` run (outside the journal's lock)
    /// each time the reader has parked: the tests' way to act only once a reader waits.
    package func batch(
        from index: inout Int,
        limit: Int,
        isolation: isolated (any Actor)?,
        whenParked: (@Sendable () -> Void)?
    ) async -> [Event] {
        while true {
            let batch: [Event]? = state.withLock { state in
                if index < state.firstIndex { index = state.firstIndex }
                if index < state.endIndex {
                    let start = index - state.firstIndex
                    let end = start + min(state.events.count - start, limit)
                    index += end - start
                    return Array(state.events[start..<end])
                }
                return state.finished ? [] : nil
            }
            if let batch { return batch }
            if Task.isCancelled { return [] }
            let readFrom = index
            // The registration race (cancelled before, or while, parking) is `suspend`'s.
            await state.suspend(
                { (state: inout State, reader: WaiterSet<Void>.Waiter) -> SuspensionDecision<Void, Bool> in
                    if readFrom < state.endIndex || state.finished { return .resume((), false) }
                    state.readers.insert(reader)
                    return .wait(true)
                },
                cancelledNow: { _ in ((), false) },
                perform: { parked in if parked { whenParked?() } },
                cancelled: { @Sendable state, id in
                    guard let reader = state.readers.remove(id) else { return nil }
                    return { reader.resume(returning: ()) }
                })
            if Task.isCancelled { return [] }
        }
    }
}

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

    package init(journal: EventJournal<Element>, startIndex: Int) {
        self.init(source: journal, startIndex: startIndex)
    }

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

/// Where an ``EventSequence`` reads its batches: a journal of the events themselves, or one
/// of compact records turned into events as they are read (a graph run's).
package protocol EventBatchSource<Element>: Sendable {
    associatedtype Element: Sendable
    /// The events from `index` on, waiting until there is at least one; empty once the
    /// source has finished and everything was read, or when the waiting task is cancelled.
    func batch(from index: inout Int, limit: Int, isolation: isolated (any Actor)?) async -> [Element]
}

extension EventJournal: EventBatchSource {
    package typealias Element = Event
}
