extension RequestGate {
    /// Test hook: suspends until at least `count` attempts wait for a slot.
    package func queuedAttempts(atLeast count: Int) async {
        await storage.queuedAttempts(atLeast: count)
    }

    /// Test hook: suspends until at least `count` requests (or ``refresh()`` callers) are
    /// parked behind a refresh; returns at once when its task is cancelled.
    package func parkedRequests(atLeast count: Int) async {
        await storage.parkedRequests(atLeast: count)
    }

    /// Test hook: suspends until no attempt and no refresh runs or waits for a slot.
    package func whenIdle() async throws {
        try await storage.whenIdle()
    }
}

extension RequestGate {
    /// Test hook: how many request deadlines the gate's timer holds (each holds its request).
    package var pendingRequestDeadlines: Int { sender.requestTimer.pendingCount }
}
