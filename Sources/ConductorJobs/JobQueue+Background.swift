extension JobQueue {
    /// Starts the queue if it has not started and waits until it is idle (``whenIdle()``);
    /// returns whether it got there. If not — the calling task was cancelled (an Apple
    /// background task's window ended), the file could not be opened, the queue was already
    /// shut down — the queue is shut down before this returns: handlers still running are
    /// cancelled and their jobs stay `running` in the file, to run again at the next start. A
    /// queue that reached idle is left running. The platform-neutral half of `run(in:)`, which
    /// Linux cannot build.
    package func runUntilIdle() async -> Bool {
        do {
            do throws(JobQueueError) {
                try await start()
            } catch  where error.code == .alreadyStarted {
                // Started by the app already, or by an earlier window: wait on it as it is.
            }
            try await whenIdle()
            return true
        } catch {
            await shutdown()
            return false
        }
    }
}
