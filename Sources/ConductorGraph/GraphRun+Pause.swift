extension GraphRun {
    /// Stops the run from starting tasks until ``resume()``: no task starts and no attempt of a
    /// task that backs off begins, while bodies already running go on and end. ``add(_:)``,
    /// ``remove(_:)``, ``cancel()`` and ``reached(_:)`` keep working.
    ///
    /// ```swift
    /// let run = try graph.start()
    /// run.pause()                       // nothing starts from here on
    /// try run.add("later") { _ in }     // queued, not started
    /// run.resume()                      // what waits starts, highest priority first
    /// ```
    ///
    /// - A task's timeout measures an attempt's body, from its start: time spent waiting in a
    ///   paused run counts nothing. A backoff goes on while paused; the next attempt then waits
    ///   for ``resume()``, and its timeout starts with it.
    /// - A paused run holds no ``TaskLimit`` place it does not use: tasks not yet started give
    ///   theirs back and withdraw their requests, and ask again on ``resume()`` — behind the
    ///   requests that came meanwhile.
    /// - A paused run whose tasks have all ended finishes; one with tasks waiting ends only by
    ///   ``resume()`` or ``cancel()``.
    ///
    /// Nothing happens if the run is paused already or has stopped. A task handed to a worker
    /// just before the pause may still begin, as after ``cancel()``.
    public func pause() {
        storage.pause()
    }

    /// Starts tasks again after ``pause()``, highest priority first. Nothing happens if the
    /// run is not paused.
    public func resume() {
        storage.resume()
    }

    /// Whether the run is paused: ``pause()`` was called, and neither ``resume()`` nor the run's
    /// end came since.
    public var isPaused: Bool {
        storage.isPaused
    }
}
