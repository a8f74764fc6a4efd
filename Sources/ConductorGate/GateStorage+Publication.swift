extension GateStorage {
    /// What a transition leaves to do once no lock is held.
    struct Publication: Sendable {
        /// Nothing to tell or wake.
        static let none = Publication(events: [], queueDepth: nil)

        var events: [GateEvent]
        /// The queue depth, when the transition changed it.
        var queueDepth: QueueDepth.Sample?
        /// `nil` unless the transition woke someone: most do not.
        var wakeups: Wakeups?
    }

    /// Tasks a transition lets go, to resume once no lock is held.
    struct Wakeups: Sendable {
        var slotStarts: [Machine.SlotStart]
        var readers: [WaiterSet<Void>.Waiter]
        var hooks: [CountWaiters<Void>.Continuation] = []
        var idle: [WaiterSet<Bool>.Waiter] = []
    }

    /// How many attempts wait for a slot, numbered per change in the transitions that change
    /// it — enqueue, start, cancel, timeout, shutdown alike — so the gauge, recorded after the
    /// lock is released and so in any order, can keep the newest (see ``SequencedGauge``).
    struct QueueDepth: Sendable {
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
}
