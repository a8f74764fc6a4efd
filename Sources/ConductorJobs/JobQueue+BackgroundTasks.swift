// Apple's BackgroundTasks framework: iOS, iPadOS, Mac Catalyst, tvOS and visionOS. Its task
// classes are not available to native macOS apps, and watchOS has its own background refresh;
// Linux has neither, so this file is not built there.
#if canImport(BackgroundTasks) && !os(macOS) && !os(watchOS)
    public import BackgroundTasks

    extension JobQueue {
        /// Runs the jobs that are due inside a background task's time window, then completes
        /// the task.
        ///
        /// Starts the queue if it has not started, and waits until it is idle (``whenIdle()``:
        /// no job runs and none can be claimed now). Completes `task` with success once it is
        /// idle, leaving the queue running. If the window ends first (the task's
        /// `expirationHandler`, which this sets), the queue is shut down (``shutdown()``): the
        /// handlers still running are cancelled and their jobs stay `running` in the file, to
        /// run again at the next start with the same idempotency key, as after a kill; the task
        /// completes without success, so the system may give it another window. A queue shut
        /// down that way takes no more jobs: make a new one for the next window, or when the
        /// app comes to the foreground.
        ///
        /// Register the task's identifier (listed under `BGTaskSchedulerPermittedIdentifiers`
        /// in the app's Info.plist) before the app finishes launching, and schedule it when
        /// there is work:
        ///
        /// ```swift-not-compiled
        /// import BackgroundTasks
        /// import ConductorJobs
        ///
        /// BGTaskScheduler.shared.register(forTaskWithIdentifier: "com.example.shop.jobs", using: nil) { task in
        ///     // A queue of its own for this window (one shut down at expiry takes no more jobs).
        ///     guard let queue = try? JobQueue(path: jobsURL.path) else { return task.setTaskCompleted(success: false) }
        ///     queue.register(PlaceOrder.self) { order, context in
        ///         try await shop.place(order, idempotencyKey: context.idempotencyKey)
        ///     }
        ///     queue.run(in: task)
        /// }
        ///
        /// let request = BGProcessingTaskRequest(identifier: "com.example.shop.jobs")
        /// request.requiresNetworkConnectivity = true
        /// try BGTaskScheduler.shared.submit(request)
        /// ```
        ///
        /// Use one queue per file at a time: a second queue starting on the file takes the
        /// first one's running jobs for a crash's leftovers and runs them again. Shut the app's
        /// foreground queue down before the window starts one, or let the window use it.
        ///
        /// Returns at once; the work goes on in a task of its own, which completes `task`.
        ///
        /// Linux has no background tasks: this method exists only where the BackgroundTasks
        /// framework does (iOS, iPadOS, Mac Catalyst, tvOS, visionOS). Elsewhere, the same
        /// window is `start()`, then ``whenIdle()``, then ``shutdown()``.
        public func run(in task: BGTask) {
            let box = BackgroundTaskBox(task: task)
            let work = Task {
                let idle = await self.runUntilIdle()
                box.task.setTaskCompleted(success: idle)
            }
            // Set before the launch handler returns: a task without one is ended unsuccessful.
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
