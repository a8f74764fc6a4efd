/// The deadlines of the running tasks whose bodies run on their workers with a timeout
/// (``GraphNodeTable/Flags/hasDeadline``: a timeout, one attempt, no limits, not on the main
/// actor): a min-heap by instant kept in the run's state machine, under its one lock, and the
/// run's one timer task (``GraphDeadlineTimer``), which sleeps until the earliest.
///
/// A task's deadline is pushed in the transition that hands it out (`takeNext`) and never
/// removed: an entry whose task has ended is dropped when the timer reaches it, so a timed
/// task that ends in time costs its end nothing here. A task the timer finds still running at
/// its deadline ends timed out in that transition, and its worker is let go
/// (``abandon(_:outcome:removed:now:in:effects:)``): the worker's task is cancelled, its place
/// in the run given back at once, and when its body returns the worker retires without
/// recording anything (``GraphNodeTable/Flags/abandonedOnWorker``). A removal and a stop let
/// such a body go the same way, as cancelled.
///
/// - Complexity: a push and a due entry O(log n) in the entries pending; a timer task is made
///   when the first deadline comes and when one earlier than the timer's wake comes.
struct GraphDeadlines {
    private var heap: [(at: Int64, node: Int32)] = []
    /// The instant the timer task sleeps until; `nil` when there is none.
    private(set) var wake: Int64?
    /// Which timer task is current: a replaced one finds another number when it wakes, and ends.
    private(set) var generation: UInt64 = 0
    /// The current timer task, once attached (``attach(_:generation:)``).
    private var timer: Task<Void, Never>?

    /// A timer task to start, and the one it replaces (to cancel).
    struct TimerStart {
        var generation: UInt64
        var wake: Int64
        var replaced: Task<Void, Never>?
    }

    var count: Int { heap.count }

    /// Pushes `node`'s deadline; returns the timer task to start when none wakes by then.
    mutating func push(_ at: Int64, node: Int32) -> TimerStart? {
        heap.append((at, node))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].at < heap[parent].at else { break }
            heap.swapAt(child, parent)
            child = parent
        }
        if let wake, wake <= at { return nil }
        return restart(wake: at)
    }

    private mutating func restart(wake at: Int64) -> TimerStart {
        generation &+= 1
        wake = at
        defer { timer = nil }
        return TimerStart(generation: generation, wake: at, replaced: timer)
    }

    /// Keeps the task of timer `generation`; `false` if it is no longer current (cancel it).
    mutating func attach(_ task: Task<Void, Never>, generation: UInt64) -> Bool {
        guard generation == self.generation, wake != nil else { return false }
        timer = task
        return true
    }

    /// Removes and returns the earliest entry due at `now`, if any.
    mutating func popDue(now: Int64) -> Int32? {
        guard let first = heap.first, first.at <= now else { return nil }
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1
                guard left < heap.count else { break }
                var least = left
                if left + 1 < heap.count, heap[left + 1].at < heap[left].at { least = left + 1 }
                guard heap[least].at < heap[parent].at else { break }
                heap.swapAt(least, parent)
                parent = least
            }
        }
        return first.node
    }

    /// Timer `generation` has fired what was due: the instant it sleeps until next, or `nil`
    /// when nothing is pending (it ends; the next push starts another).
    mutating func timerSleeps(_ generation: UInt64) -> Int64? {
        guard generation == self.generation, wake != nil else { return nil }
        guard let first = heap.first else {
            wake = nil
            timer = nil
            return nil
        }
        wake = first.at
        return first.at
    }

    /// Timer `generation` ended without being asked (its sleep failed): a push starts another.
    mutating func timerEnded(_ generation: UInt64) {
        guard generation == self.generation else { return }
        wake = nil
        timer = nil
    }

    /// Forgets every deadline and ends the timer: the run has stopped or finished. Returns
    /// the timer's task, to cancel.
    mutating func removeAll() -> Task<Void, Never>? {
        heap = []
        generation &+= 1
        wake = nil
        defer { timer = nil }
        return timer
    }

    /// The nodes with a pending entry (some may have ended).
    var nodes: [Int32] { heap.map(\.node) }
}

// MARK: - Transitions

extension GraphDeadlines {
    /// `node`, handed out at `now` with a timeout, gets its deadline.
    static func started(
        _ node: Int, spec: Unmanaged<TaskSpec>, now: Int64, in machine: inout GraphStateMachine,
        effects: inout GraphEffects
    ) {
        let at = now &+ spec._withUnsafeGuaranteedRef { $0.timeoutNanoseconds }
        if let start = machine.deadlines.push(at, node: Int32(node)) { effects.startTimer(start) }
    }

    /// Whether `node` runs a body on its worker under a deadline, not yet let go.
    static func holds(_ node: Int, in machine: GraphStateMachine) -> Bool {
        let flags = machine.table.nodes[node].flags
        return machine.table.nodes[node].phase == .running && flags.contains(.hasDeadline)
            && !flags.contains(.abandonedOnWorker)
    }

    /// Timer `generation` woke at `now`: every task still running past its deadline ends timed
    /// out. Returns the instant to sleep until next, or `nil` for the timer to end.
    static func due(
        _ generation: UInt64, now: Int64, in machine: inout GraphStateMachine,
        effects: inout GraphEffects
    ) -> Int64? {
        guard generation == machine.deadlines.generation else { return nil }
        while machine.isRunning, let entry = machine.deadlines.popDue(now: now) {
            let node = Int(entry)
            guard holds(node, in: machine), let spec = machine.topology.specs[node] else { continue }
            let timeout = spec._withUnsafeGuaranteedRef { $0.timeout } ?? .zero
            abandon(node, outcome: .timedOut(after: timeout), removed: false, now: now, in: &machine, effects: &effects)
        }
        machine.wakeDriverIfNeeded(&effects)
        machine.finishIfDone(now: now, effects: &effects)
        return machine.deadlines.timerSleeps(generation)
    }

    /// Ends running `node` with `outcome` now and lets its worker go: the worker's place and
    /// count are given back, its task cancelled, and it retires when the body returns.
    static func abandon(
        _ node: Int, outcome: TaskOutcome, removed: Bool, now: Int64, in machine: inout GraphStateMachine,
        effects: inout GraphEffects
    ) {
        let worker = machine.table.nodes[node].remaining
        machine.table.nodes[node].flags.insert(.abandonedOnWorker)
        if removed { machine.table.markRemoved(node) }
        machine.workers.running -= 1
        machine.workers.workerEnded(helper: machine.workers.registry.isHelper(worker))
        if let task = machine.workers.registry.pin(worker) { effects.cancelWorker(task, id: worker) }
        machine.end(node, outcome: outcome, now: now, effects: &effects)
    }

    /// The run stops: every body on a worker under a deadline is let go, as cancelled, and the
    /// timer ends.
    static func stopped(now: Int64, in machine: inout GraphStateMachine, effects: inout GraphEffects) {
        guard machine.deadlines.wake != nil || machine.deadlines.count > 0 else { return }
        for entry in machine.deadlines.nodes where holds(Int(entry), in: machine) {
            abandon(Int(entry), outcome: .cancelled, removed: false, now: now, in: &machine, effects: &effects)
        }
        effects.cancel(machine.deadlines.removeAll())
    }
}
