extension Launcher {
    /// Whether any thread holds the launcher's lock right now. A test calls it from user code
    /// the launcher runs (a task's property, a clock's `now`) to prove that code runs outside
    /// the lock; nothing else may touch the launcher meanwhile, or the answer means nothing.
    package var isLockedForTesting: Bool {
        state.withLockIfAvailable { _ in } == nil
    }
}

extension Launcher {
    /// ``run()`` calls the graph's hook (``TaskGraph/holdsCallerAfterStartingDriver``) here,
    /// once ``start()`` has started the launch's driver.
    func afterStartingLaunch() async {
        guard TaskGraph.holdsCallerAfterStartingDriver, let storage = state.withLock({ $0.launched }) else {
            return
        }
        await storage.afterStartingDriver()
    }
}
