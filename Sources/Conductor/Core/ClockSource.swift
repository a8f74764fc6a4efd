/// A type-erased `Clock<Duration>` that measures time as an offset from the moment it was made.
///
/// Every primitive that waits stores one of these, so the public API can take
/// `some Clock<Duration>` while the storage stays non-generic. Offsets (rather than the
/// clock's own `Instant`) are what reports and traces need anyway.
package struct ClockSource: Sendable {
    private let elapsed: @Sendable () -> Duration
    private let sleeper: @Sendable (Duration) async throws -> Void

    package init<C: Clock>(_ clock: C) where C.Duration == Duration {
        let origin = clock.now
        self.elapsed = { origin.duration(to: clock.now) }
        self.sleeper = { offset in try await clock.sleep(until: origin.advanced(by: offset), tolerance: nil) }
    }

    /// The time since this source was made.
    package var now: Duration { elapsed() }

    /// Sleeps until `deadline`, an offset from this source's origin. Throws `CancellationError` when cancelled.
    package func sleep(until deadline: Duration) async throws {
        try await sleeper(deadline)
    }

    /// Sleeps for `duration` from now. Throws `CancellationError` when cancelled.
    package func sleep(for duration: Duration) async throws {
        try await sleeper(elapsed() + duration)
    }
}
