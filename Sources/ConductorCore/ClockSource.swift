#if canImport(Glibc)
    public import Glibc
#elseif canImport(Darwin)
    public import Darwin
#endif

/// A type-erased `Clock<Duration>` that measures time as an offset from the moment it was made.
///
/// Every primitive that waits stores one of these, so the public API can take
/// `some Clock<Duration>` while the storage stays non-generic. Offsets (rather than the
/// clock's own `Instant`) are what reports and traces need anyway.
///
/// A source made with ``purpose(_:)`` tells a clock that can tell sleeps apart (the test
/// kit's `ManualClock`, through ``SleepPurposeAwareClock``) why it sleeps; any other clock
/// never sees the purpose, so production clocks pay nothing for it.
@usableFromInline package struct ClockSource: Sendable {
    @usableFromInline let elapsed: @Sendable () -> Duration
    /// For a `ContinuousClock`, the platform clock it reads, at this source's origin: a graph
    /// reads the time on every task, and reading it directly in nanoseconds costs neither a
    /// closure call nor a division of `Duration`'s 128-bit attoseconds.
    @usableFromInline let continuousOrigin: Int64?
    private let sleeper: @Sendable (Duration, SleepPurpose) async throws -> Void
    /// Why this source's sleeps happen.
    package private(set) var sleepPurpose = SleepPurpose.unspecified

    package init<C: Clock>(_ clock: C) where C.Duration == Duration {
        if let aware = clock as? any SleepPurposeAwareClock {
            self = Self(aware: aware)
            return
        }
        if C.self == ContinuousClock.self, let origin = Self.continuousNanoseconds() {
            let instant = ContinuousClock.now
            self.init(
                elapsed: { .nanoseconds(Self.continuousNanoseconds()! &- origin) },
                sleeper: { offset, _ in try await ContinuousClock().sleep(until: instant.advanced(by: offset)) },
                continuousOrigin: origin
            )
            return
        }
        let origin = clock.now
        self.init(
            elapsed: { origin.duration(to: clock.now) },
            sleeper: { offset, _ in try await clock.sleep(until: origin.advanced(by: offset), tolerance: nil) }
        )
    }

    private init<C: SleepPurposeAwareClock>(aware clock: C) {
        let origin = clock.now
        self.init(
            elapsed: { origin.duration(to: clock.now) },
            sleeper: { offset, purpose in try await clock.sleep(until: origin.advanced(by: offset), purpose: purpose) }
        )
    }

    private init(
        elapsed: @escaping @Sendable () -> Duration,
        sleeper: @escaping @Sendable (Duration, SleepPurpose) async throws -> Void,
        continuousOrigin: Int64? = nil
    ) {
        self.elapsed = elapsed
        self.sleeper = sleeper
        self.continuousOrigin = continuousOrigin
    }

    /// What `ContinuousClock` reads, in nanoseconds: the same platform clock as the standard
    /// library's (`CLOCK_BOOTTIME` on Linux, `CLOCK_MONOTONIC_RAW` on Apple platforms), so a
    /// deadline computed from it is one `ContinuousClock` sleeps until. `nil` elsewhere.
    @inlinable static func continuousNanoseconds() -> Int64? {
        #if canImport(Glibc)
            var time = timespec()
            guard clock_gettime(CLOCK_BOOTTIME, &time) == 0 else { return nil }
            return Int64(time.tv_sec) &* 1_000_000_000 &+ Int64(time.tv_nsec)
        #elseif canImport(Darwin)
            return Int64(truncatingIfNeeded: clock_gettime_nsec_np(CLOCK_MONOTONIC_RAW))
        #else
            return nil
        #endif
    }

    /// The same clock and origin, with every sleep made for `purpose`.
    package func purpose(_ purpose: SleepPurpose) -> ClockSource {
        var copy = self
        copy.sleepPurpose = purpose
        return copy
    }

    /// The time since this source was made.
    @inlinable package var now: Duration { elapsed() }

    /// The time since this source was made, in nanoseconds.
    @inlinable package var nanoseconds: Int64 {
        if let continuousOrigin, let now = Self.continuousNanoseconds() { return now &- continuousOrigin }
        return elapsed().nanoseconds
    }

    /// Sleeps until `deadline`, an offset from this source's origin. Throws `CancellationError` when cancelled.
    package func sleep(until deadline: Duration) async throws {
        try await sleeper(deadline, sleepPurpose)
    }

    /// Sleeps for `duration` from now. Throws `CancellationError` when cancelled.
    package func sleep(for duration: Duration) async throws {
        try await sleeper(elapsed() + duration, sleepPurpose)
    }
}

/// Why the library sleeps on a clock: a tag a test clock can read to tell its sleepers apart
/// (a task's timeout from a retry's backoff, say). Names are stable; the test kit shows them
/// as `ManualClock.SleepPurpose`.
package struct SleepPurpose: Hashable, Sendable {
    package let name: String

    package init(_ name: String) { self.name = name }

    /// A sleep whose purpose nobody stated: user code, or a clock source never given one.
    package static let unspecified = SleepPurpose("unspecified")
}

/// A clock that accepts a purpose with each sleep. Only test clocks adopt it.
package protocol SleepPurposeAwareClock: Clock where Duration == Swift.Duration {
    func sleep(until deadline: Instant, purpose: SleepPurpose) async throws
}
