import Synchronization

/// An observer's delivery: what ``Launcher/observe(on:_:)`` and ``GraphRun/observe(on:_:)``
/// return, to stop it early.
///
/// ```swift
/// let observation = run.observe(on: .mainActor) { event in progress.apply(event) }
/// // The screen showing progress went away:
/// observation.cancel()
/// ```
///
/// Keeping the handle is optional, and dropping it does not stop the observer: delivery
/// ends by itself after the last event of the run or launch, or when a launcher that was
/// never started is released.
///
/// - Complexity: ``cancel()`` is O(1) and never waits for a callback in progress.
public struct ObservationHandle: Sendable {
    /// Set by ``cancel()``; checked on the callback's target right before each event, so a
    /// batch already on its way when you cancel is dropped rather than delivered late.
    package final class Flag: Sendable {
        private let value = Atomic(false)

        package var isSet: Bool { value.load(ordering: .acquiring) }

        package func set() { value.store(true, ordering: .releasing) }
    }

    package let task: Task<Void, Never>
    private let stopped: Flag

    package init(task: Task<Void, Never>, stopped: Flag) {
        self.task = task
        self.stopped = stopped
    }

    /// Stops the observer: once this returns, it is not called again (a call already running
    /// on its target finishes). Cancelling twice, or after delivery ended, does nothing.
    public func cancel() {
        stopped.set()
        task.cancel()
    }
}
