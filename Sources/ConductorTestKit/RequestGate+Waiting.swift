public import Conductor

// The gate's test hooks as they exist today, for users' tests: kept to this one file while
// the gate is rebuilt, so it is easy to adapt. Both wrap the library's `package` hooks.

extension RequestGate {
    /// Suspends until at least `count` request attempts are queued, waiting for a slot —
    /// the event a test waits for before it releases running work or expires a credential,
    /// so queue order is never a race.
    public func waitUntilQueued(atLeast count: Int) async {
        await queuedAttempts(atLeast: count)
    }
}

extension PriorityScheduler {
    /// Suspends until at least `count` submissions are queued, waiting for a slot.
    public func waitUntilQueued(atLeast count: Int) async {
        await queued(atLeast: count)
    }

    /// Suspends until at least `count` submissions are queued in `priority`'s lane: for a test
    /// that checks a caller joining a coalesced flight raised it before a slot freed up.
    public func waitUntilQueued(atLeast count: Int, in priority: RequestPriority) async {
        await queued(atLeast: count, in: priority)
    }
}
