// Apple's BackgroundTasks framework: iOS, iPadOS, Mac Catalyst, tvOS and visionOS. Its task
// classes are not available to native macOS apps, and watchOS has its own background refresh;
// Linux has neither, so this file is not built there.
#if canImport(BackgroundTasks) && !os(macOS) && !os(watchOS)
    public import BackgroundTasks

    extension JobQueue {
        /// Runs the due jobs inside a background task's window: starts the queue if needed, waits
        /// for ``whenIdle()`` and completes `task` with success, the queue left running. If the
        /// window ends first (the `expirationHandler`, which this sets), the queue shuts down
        /// (``shutdown()``): running jobs stay `running` in the file and run again at the next
        /// start, and `task` completes without success. Returns at once. Only where the
        /// BackgroundTasks framework is (not Linux); the "Durable jobs" article shows the set-up.
        ///
        /// ```swift-not-compiled
        /// BGTaskScheduler.shared.register(forTaskWithIdentifier: "com.example.jobs", using: nil) { task in
        ///     makeJobQueue().run(in: task)  // a new queue per window: one shut down takes no more jobs
        /// }
        /// ```
        public func run(in task: BGTask) {
            let box = BackgroundTaskBox(task: task)
            let work = Task {
                let idle = await self.runUntilIdle()
                box.task.setTaskCompleted(success: idle)
            }
            // Set before the launch handler returns: a task without one ends unsuccessful.
            task.expirationHandler = { work.cancel() }
        }
    }

    /// Carries a `BGTask` to the task that completes it. `BGTask` is not marked `Sendable`, but
    /// it is used across threads by design: the system calls its `expirationHandler` on a queue
    /// of its own while the launch handler's work goes on, and Apple's sample code ("Refreshing
    /// and Maintaining Your App Using Background Tasks") calls `setTaskCompleted(success:)` from
    /// an operation's completion block, on whatever thread that runs. After `run(in:)` sets the
    /// expiration handler, only `setTaskCompleted(success:)` is called, once, through this box.
    private struct BackgroundTaskBox: @unchecked Sendable {
        let task: BGTask
    }
#endif
