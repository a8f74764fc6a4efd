public import Conductor

/// Records every event of an `EventSequence` from the moment it is made, so a
/// test can wait for the event it needs and then check the whole sequence.
///
/// ```swift
/// let recorder = EventRecorder(run.events)
/// let started = await recorder.first { if case .taskStarted = $0 { true } else { false } }
/// release.open()
/// let all = await recorder.finished()   // every event, once the run's journal ends
/// ```
///
/// The recorder reads the sequence on a task of its own, which ends with the sequence, when
/// ``cancel()`` is called, or when the recorder is released.
public final class EventRecorder<Event: Sendable>: Sendable {
    private struct State {
        var events: [Event] = []
        var isFinished = false
        var waiters = CountWaiters<Void>()

        /// The count waiters wait on: once the sequence has ended no more events come, so it
        /// meets every threshold (``EventRecorder/finished()`` waits for `.max`).
        var progress: Int { isFinished ? .max : events.count }

        /// Takes the waiters whose count is met, or all of them once the sequence has ended.
        mutating func takeReady() -> [CountWaiters<Void>.Continuation] {
            waiters.takeSatisfied(by: progress)
        }
    }

    /// The recording, in a box of its own so the reading task never keeps the recorder alive.
    private final class Storage: Sendable {
        let state = Lock(State())
    }

    private let storage = Storage()
    private var state: Lock<State> { _read { yield storage.state } }
    private let reader = Lock<Task<Void, Never>?>(nil)

    /// Starts recording `events`.
    public init(_ events: EventSequence<Event>) {
        let storage = self.storage
        let task = Task {
            for await event in events {
                let ready = storage.state.withLock { state in
                    state.events.append(event)
                    return state.takeReady()
                }
                for waiter in ready { waiter.resume() }
            }
            let ready = storage.state.withLock { state in
                state.isFinished = true
                return state.takeReady()
            }
            for waiter in ready { waiter.resume() }
        }
        reader.withLock { $0 = task }
    }

    deinit {
        reader.withLock { $0 }?.cancel()
    }

    /// The events recorded so far, in order.
    public var events: [Event] { state.withLock { $0.events } }

    /// Whether the sequence has ended (or recording was cancelled).
    public var isFinished: Bool { state.withLock { $0.isFinished } }

    /// Stops recording. Waiting callers resume with what was recorded.
    public func cancel() {
        reader.withLock { $0 }?.cancel()
    }

    /// Suspends until at least `count` events are recorded, the sequence ends, or the waiting
    /// task is cancelled, and returns the events recorded by then.
    @discardableResult
    public func events(atLeast count: Int) async -> [Event] {
        await storage.state.wait(untilCountOf: { $0.progress }, reaches: count, waiters: \.waiters)
        return events
    }

    /// Suspends until an event matching `predicate` is recorded and returns the first such
    /// event; `nil` when the sequence ends without one or the waiting task is cancelled.
    /// `predicate` runs on the caller, never under the recorder's lock.
    public func first(
        isolation: isolated (any Actor)? = #isolation,
        where predicate: (Event) -> Bool
    ) async -> Event? {
        var checked = 0
        while !Task.isCancelled {
            let (events, finished) = state.withLock { ($0.events, $0.isFinished) }
            if let match = events[checked...].first(where: predicate) { return match }
            if finished { return nil }
            checked = events.count
            await self.events(atLeast: checked + 1)
        }
        return nil
    }

    /// Suspends until the sequence ends (or the waiting task is cancelled) and returns every
    /// event recorded.
    public func finished() async -> [Event] {
        await events(atLeast: .max)
    }
}
