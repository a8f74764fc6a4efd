import HeapModule

/// Names one scheduled deadline of a ``DeadlineTimer``, so it can be cancelled.
package struct DeadlineToken: Hashable, Sendable {
    fileprivate let id: UInt64
}

/// The pure state of a ``DeadlineTimer``: the pending deadlines in a heap and the one timer
/// task that sleeps until the earliest of them.
///
/// Every operation returns what the caller must do once its lock is released (start a timer
/// task, cancel one, fire payloads, drop them); nothing here sleeps, reads a clock or runs a
/// payload, so the whole protocol is unit-tested without concurrency. `Payload` is what a
/// deadline carries (a callback in the timer) and `Handle` the timer task (a `Task` there).
///
/// The timer's protocol, by generation: each timer task is started for one generation and
/// reports with it; a task whose generation is no longer the current one has been replaced
/// (an earlier deadline arrived while it slept) or stopped (nothing left to wait for), and
/// does nothing more. Cancelled deadlines are deleted lazily: their heap entries are skipped
/// when they reach the top, and the heap is compacted when they outnumber live ones.
///
/// - Complexity: ``schedule(at:_:)`` O(log n); ``cancel(_:)`` O(1) amortised (the heap entry
///   goes later, in O(log n)); each deadline fired O(log n).
package struct DeadlineStateMachine<Payload, Handle> {
    /// What the caller of ``schedule(at:_:)`` does after unlocking.
    package enum ScheduleAction {
        /// The timer already wakes in time for this deadline.
        case none
        /// Start a timer task for `generation` that first sleeps until `wake`, then reports with
        /// ``timerWoke(_:now:)``; give its handle back with ``attach(_:to:)``. Cancel
        /// `replacing`, the task it supersedes, if there is one.
        case startTimer(generation: UInt64, wake: Duration, replacing: Handle?)
    }

    /// What the caller of ``cancel(_:)`` does after unlocking.
    package enum CancelAction {
        /// The deadline had fired, was cancelled before, or never existed: nothing to do.
        case notPending
        /// The deadline will not fire; drop its payload. `stopTimer` is the timer task to cancel
        /// when nothing is left to wait for.
        case cancelled(Payload, stopTimer: Handle?)
    }

    /// What the timer task does next, from ``timerWoke(_:now:)``.
    package enum TimerStep {
        /// Run these payloads (in deadline order), then report again.
        case fire([Payload])
        /// Sleep until this offset, then report again.
        case sleep(until: Duration)
        /// End: nothing is left to wait for, or this task was replaced.
        case stop
    }

    private struct Entry: Comparable {
        package var deadline: Duration
        /// Breaks ties in the order deadlines were scheduled.
        package var id: UInt64

        package static func < (lhs: Entry, rhs: Entry) -> Bool {
            (lhs.deadline, lhs.id) < (rhs.deadline, rhs.id)
        }
    }

    private enum Timer {
        /// No timer task: nothing to wait for (or the last one's sleep failed).
        case idle
        /// The task of `generation` sleeps until `wake`, or is awake (`nil`) and will report
        /// before it sleeps again. `handle` is `nil` until ``attach(_:to:)``.
        case active(generation: UInt64, wake: Duration?, handle: Handle?)
    }

    private var heap = Heap<Entry>()
    private var payloads: [UInt64: (deadline: Duration, payload: Payload)] = [:]
    private var nextID: UInt64 = 0
    private var nextGeneration: UInt64 = 0
    private var timer = Timer.idle

    /// Whether the timer task sleeps on when its last deadline is cancelled, until the wake it
    /// sleeps for (then it stops, unless deadlines came meanwhile): for an owner whose deadlines
    /// come and go one after another (a gate's requests), which would otherwise start and stop
    /// a task for nearly every one. The owner stops it with ``cancelAll()`` when it ends.
    package let keepsIdleTimer: Bool

    package init(keepsIdleTimer: Bool = false) {
        self.keepsIdleTimer = keepsIdleTimer
    }

    /// How many deadlines are pending (scheduled, not yet fired or cancelled).
    package var pendingCount: Int { payloads.count }

    /// Whether a timer task is running (or about to).
    package var hasTimer: Bool {
        if case .active = timer { return true }
        return false
    }

    /// The current timer task's handle, once attached.
    package var timerHandle: Handle? {
        if case .active(_, _, let handle) = timer { return handle }
        return nil
    }

    /// Adds a deadline, an offset on the owner's clock. A deadline already past fires as soon
    /// as the timer runs.
    package mutating func schedule(at deadline: Duration, _ payload: Payload) -> (DeadlineToken, ScheduleAction) {
        let id = nextID
        nextID += 1
        heap.insert(Entry(deadline: deadline, id: id))
        payloads[id] = (deadline, payload)
        let token = DeadlineToken(id: id)
        switch timer {
        case .idle:
            // After a failed sleep earlier deadlines may be waiting too: wake for the earliest.
            return (token, startTimer(wake: earliestLive() ?? deadline, replacing: nil))
        case .active(_, let wake?, let handle) where deadline < wake:
            return (token, startTimer(wake: deadline, replacing: handle))
        case .active:
            // Sleeping until no later than this deadline, or awake and about to report.
            return (token, .none)
        }
    }

    /// Cancels a pending deadline: its payload will not fire.
    package mutating func cancel(_ token: DeadlineToken) -> CancelAction {
        guard let (_, payload) = payloads.removeValue(forKey: token.id) else { return .notPending }
        if payloads.isEmpty {
            heap = Heap()
            return .cancelled(payload, stopTimer: keepsIdleTimer ? nil : stopTimer())
        }
        compactIfSparse()
        return .cancelled(payload, stopTimer: nil)
    }

    /// Cancels every pending deadline and stops the timer: the owner has finished.
    package mutating func cancelAll() -> (dropped: [Payload], stopTimer: Handle?) {
        let dropped = payloads.values.map(\.payload)
        payloads = [:]
        heap = Heap()
        return (dropped, stopTimer())
    }

    /// Keeps the handle of the timer task started for `generation`. Returns `false` when that
    /// generation was replaced or stopped meanwhile: the caller cancels the task.
    package mutating func attach(_ handle: Handle, to generation: UInt64) -> Bool {
        guard case .active(generation, let wake, nil) = timer else { return false }
        timer = .active(generation: generation, wake: wake, handle: handle)
        return true
    }

    /// The timer task of `generation` is awake at `now` (read from the clock before locking):
    /// what it does next.
    package mutating func timerWoke(_ generation: UInt64, now: Duration) -> TimerStep {
        guard case .active(generation, _, let handle) = timer else { return .stop }
        var due: [Payload] = []
        while let top = heap.min, top.deadline <= now {
            heap.removeMin()
            if let (_, payload) = payloads.removeValue(forKey: top.id) { due.append(payload) }
        }
        if !due.isEmpty {
            // Awake until it reports again, so a deadline added meanwhile starts no new task.
            timer = .active(generation: generation, wake: nil, handle: handle)
            return .fire(due)
        }
        guard let wake = earliestLive() else {
            timer = .idle
            heap = Heap()
            return .stop
        }
        timer = .active(generation: generation, wake: wake, handle: handle)
        return .sleep(until: wake)
    }

    /// The sleep of the timer task of `generation` threw. A replaced or stopped task was
    /// cancelled on purpose; the current one can only have met a clock that failed on its own.
    /// Its deadlines then stay, without a timer, and the next ``schedule(at:_:)`` starts one
    /// for the earliest of them — the clock is not retried in a loop that could spin.
    package mutating func sleepFailed(_ generation: UInt64) {
        guard case .active(generation, _, _) = timer else { return }
        timer = .idle
    }

    // MARK: - Helpers

    private mutating func startTimer(wake: Duration, replacing handle: Handle?) -> ScheduleAction {
        let generation = nextGeneration
        nextGeneration += 1
        timer = .active(generation: generation, wake: wake, handle: nil)
        return .startTimer(generation: generation, wake: wake, replacing: handle)
    }

    private mutating func stopTimer() -> Handle? {
        defer { timer = .idle }
        if case .active(_, _, let handle) = timer { return handle }
        return nil
    }

    /// The earliest pending deadline, dropping the cancelled entries above it.
    private mutating func earliestLive() -> Duration? {
        while let top = heap.min {
            if payloads[top.id] != nil { return top.deadline }
            heap.removeMin()
        }
        return nil
    }

    /// Rebuilds the heap from the live entries once cancelled ones are the large majority, so
    /// a long-lived owner whose deadlines are mostly cancelled (timeouts that rarely fire)
    /// keeps memory proportional to what is pending. O(n), amortised over the cancels.
    private mutating func compactIfSparse() {
        guard heap.count > 64, heap.count > 4 * payloads.count else { return }
        heap = Heap(payloads.map { Entry(deadline: $0.value.deadline, id: $0.key) })
    }
}
