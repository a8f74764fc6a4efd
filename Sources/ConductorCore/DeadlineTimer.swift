/// Races work against deadlines on an owner's clock: one timer task per owner, however many
/// deadlines it has pending. Every primitive that times something out uses it — the graph's
/// timed attempts (one timer per run), the launcher's `ready(_:timeout:)`, the harmonizers of
/// a registry — instead of a sleeping task per deadline.
///
/// ```swift
/// let timer = DeadlineTimer(clock: clock)              // one per run, gate or registry
/// let token = timer.schedule(after: timeout) {          // on the timer's task, no lock held
///     outcome.settle(.failure(GateError.timedOut(name, after: timeout)))
/// }
/// let result = await outcome.waitIgnoringCancellation()
/// timer.cancel(token)                                   // settled first: disarm
/// ```
///
/// For the common shape — run this work in a task of its own, and stop waiting for it at the
/// deadline — ``race(_:until:onDeadline:onCancel:)`` does all of it:
///
/// ```swift
/// let result = await timer.race(
///     { do { .success(try await work()) } catch { .failure(error) } },
///     until: timer.clock.now + timeout,
///     onDeadline: { .failure(GateError.timedOut(name, after: timeout)) },
///     onCancel: { .failure(GateError.cancelled(name)) }
/// )
/// ```
///
/// The timer task sleeps until the earliest pending deadline; a deadline earlier than that
/// replaces it with one that wakes sooner, and when nothing is pending it ends, so an idle
/// owner has no task at all. Callbacks run on the timer's task, in deadline order, outside
/// any lock; they should be short (settle a cell, decide an outcome), since the owner's
/// later deadlines wait for them. A callback may schedule or cancel deadlines.
///
/// - Complexity: ``schedule(at:_:)`` and a fired deadline O(log n) under one short lock;
///   ``cancel(_:)`` O(1) amortised. A timer task is created when the owner goes from no
///   pending deadline to one, or when a deadline earlier than all others arrives.
package final class DeadlineTimer: Sendable {
    package typealias Token = DeadlineToken
    private typealias Machine = DeadlineStateMachine<@Sendable () -> Void, Task<Void, Never>>

    /// The clock deadlines are offsets on.
    package let clock: ClockSource
    private let state: Lock<Machine>

    /// With `keepsIdleTimer`, the timer task is not stopped when the last pending deadline is
    /// cancelled: it sleeps on until the wake it was sleeping for, then stops if nothing is
    /// pending (see ``DeadlineStateMachine/keepsIdleTimer``). The owner calls ``cancelAll()``
    /// when it ends, so the task ends with it.
    package init(clock: ClockSource, keepsIdleTimer: Bool = false) {
        self.clock = clock
        self.state = Lock(Machine(keepsIdleTimer: keepsIdleTimer))
    }

    /// Calls `fire` once `deadline` (an offset on ``clock``) has passed, unless it is
    /// cancelled first. A deadline already past fires on the timer's task soon after.
    @discardableResult
    package func schedule(at deadline: Duration, _ fire: @escaping @Sendable () -> Void) -> Token {
        let (token, action) = state.withLock { $0.schedule(at: deadline, fire) }
        perform(action)
        return token
    }

    /// Calls `fire` once `delay` has passed, from now, unless it is cancelled first.
    @discardableResult
    package func schedule(after delay: Duration, _ fire: @escaping @Sendable () -> Void) -> Token {
        schedule(at: clock.now + delay, fire)
    }

    /// Cancels a deadline. Returns `true` if it was pending, in which case its callback will
    /// never run; `false` if it has already fired (its callback may still be running) or was
    /// cancelled before. Stops the timer task when nothing else is pending.
    @discardableResult
    package func cancel(_ token: Token) -> Bool {
        switch state.withLock({ $0.cancel(token) }) {
        case .notPending:
            return false
        case .cancelled(_, let timer):
            // The callback, and whatever it captured, was handed out and is released here,
            // after unlocking.
            timer?.cancel()
            return true
        }
    }

    /// Cancels every pending deadline and stops the timer task: for an owner that has finished.
    package func cancelAll() {
        // The callbacks are released on return, after unlocking.
        let (_, timer) = state.withLock { $0.cancelAll() }
        timer?.cancel()
    }

    /// How many deadlines are pending.
    package var pendingCount: Int { state.withLock { $0.pendingCount } }

    /// Whether a timer task is running (it ends when nothing is pending).
    package var hasTimer: Bool { state.withLock { $0.hasTimer } }

    /// The running timer task, for a test that must wait for it to end.
    package var timerTask: Task<Void, Never>? { state.withLock { $0.timerHandle } }

    // MARK: - The timer task

    private func perform(_ action: Machine.ScheduleAction) {
        guard case .startTimer(let generation, let wake, let replaced) = action else { return }
        replaced?.cancel()
        // Detached: the timer serves every caller, so it takes none's task-locals; it keeps
        // the priority of the one whose deadline it wakes for.
        let task = Task.detached(executorPreference: TaskPlacement.executor, priority: Task.currentPriority) {
            await self.runTimer(generation, firstWake: wake)
        }
        if !state.withLock({ $0.attach(task, to: generation) }) { task.cancel() }
    }

    private func runTimer(_ generation: UInt64, firstWake: Duration) async {
        var wake = firstWake
        while true {
            do {
                try await clock.sleep(until: wake)
            } catch {
                state.withLock { $0.sleepFailed(generation) }
                return
            }
            // Fire everything due, then look again: a callback may have scheduled more.
            stepping: while true {
                let now = clock.now
                switch state.withLock({ $0.timerWoke(generation, now: now) }) {
                case .fire(let callbacks):
                    for callback in callbacks { callback() }
                case .sleep(let until):
                    wake = until
                    break stepping
                case .stop:
                    return
                }
            }
        }
    }
}
