extension JobQueue {
    /// Installs `hook`, called at each ``JobCrashPoint`` of every job with the job's id, outside
    /// any lock: a crash test's child process kills itself there (`kill(getpid(), SIGKILL)`) to
    /// leave the file as a crash at that point would.
    ///
    /// ```swift
    /// queue.setCrashHook { point, id in
    ///     if point == .afterHandler, id == target { kill(getpid(), SIGKILL) }
    /// }
    /// ```
    package func setCrashHook(_ hook: (@Sendable (JobCrashPoint, JobID) -> Void)?) {
        state.withLock { $0.crashHook = hook }
    }

    /// How many ``whenIdle()`` calls wait now: a test waits for its call to be registered
    /// before it changes what the call waits for.
    package var idleWaiterCount: Int { state.withLock { $0.idleWaiters.count } }

    /// Opens the file read-only, as SQLite does a file it may not write: how a test run as root
    /// (whom file permissions do not stop) sees what a user without write access would.
    package convenience init(readOnlyPath path: String, configuration: JobQueueConfiguration) throws(JobQueueError) {
        try self.init(path: path, configuration: configuration, readOnly: true)
    }
}
