/// What a transition of a ``GateStorage`` leaves to do once no lock is held: the events to
/// tell the logger and the instruments, the queue-depth gauge's new sample, and the tasks to
/// resume.
struct GateTransitionEffects: Sendable {
    /// Tasks a transition lets go.
    struct Resumed: Sendable {
        var slotStarts: [GateStorage.Machine.SlotStart]
        var readers: [WaiterSet<Void>.Waiter]
        var hooks: [CountWaiters<Void>.Continuation] = []
        var idle: [WaiterSet<Bool>.Waiter] = []
    }

    /// Nothing to tell or resume.
    static let none = GateTransitionEffects(events: [], queueDepth: nil)

    var events: [GateEvent]
    /// The queue depth, when the transition changed it.
    var queueDepth: GateQueueDepth.Sample?
    /// `nil` unless the transition woke someone: most do not.
    var resumed: Resumed?
    /// The requests a refresh's end released (the refresh's own transition only), which the
    /// instruments link to its span.
    var releasedByRefresh: [UInt64] = []
}

/// How many attempts wait for a slot, numbered per change in the transitions that change it —
/// enqueue, start, cancel, timeout, shutdown alike — so the gauge, recorded after the lock is
/// released and so in any order, can keep the newest (see ``SequencedGauge``).
struct GateQueueDepth: Sendable {
    struct Sample: Sendable {
        var depth: Int
        var sequence: UInt64
    }

    private var last = 0
    private var sequence: UInt64 = 0

    /// Called by every transition, under the gate's lock: a sample when `depth` changed.
    mutating func sample(_ depth: Int) -> Sample? {
        guard depth != last else { return nil }
        last = depth
        sequence += 1
        return Sample(depth: depth, sequence: sequence)
    }
}
