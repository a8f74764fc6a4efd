extension JobQueue {
    /// Starts the queue if needed and waits for ``whenIdle()``; returns whether it got there.
    /// If not (the calling task was cancelled, the file would not open, the queue was shut down),
    /// shuts the queue down first. The platform-neutral half of `run(in:)`, which Linux cannot build.
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
