/// The waits between attempts: `initial`, then each wait `multiplier` times the one before,
/// never more than `maximum` — the one schedule behind every retry in Conductor.
///
/// ```swift
/// let schedule = RetrySchedule(initial: .milliseconds(100), multiplier: 2, maximum: .seconds(1))
/// schedule.delay(afterAttempt: 1)  // 100 ms
/// schedule.delay(afterAttempt: 3)  // 400 ms
/// var jitter = SplitMix64(seed: 7)
/// schedule.delay(afterAttempt: 3, jitter: &jitter)  // somewhere in [200 ms, 400 ms)
/// ```
///
/// - Complexity: O(log(maximum ÷ initial)) per delay: the loop stops once the cap is reached.
@usableFromInline package struct RetrySchedule: Hashable, Sendable {
    @usableFromInline package let initial: Duration
    @usableFromInline package let multiplier: Int
    @usableFromInline package let maximum: Duration

    /// `multiplier` below 1 counts as 1 (a schedule never shrinks).
    @inlinable package init(initial: Duration, multiplier: Int = 2, maximum: Duration) {
        self.initial = initial
        self.multiplier = max(1, multiplier)
        self.maximum = maximum
    }

    /// The wait after failed attempt `attempt` (1-based; anything below 1 counts as 1).
    @inlinable package func delay(afterAttempt attempt: Int) -> Duration {
        var delay = initial
        for _ in 1..<max(1, attempt) {
            if delay >= maximum { return maximum }
            delay *= multiplier
        }
        return min(delay, maximum)
    }

    /// ``delay(afterAttempt:)`` scaled by a random factor in [0.5, 1), so callers that failed
    /// together spread out; drawn from `jitter`, so a seeded generator replays it.
    @inlinable package func delay(afterAttempt attempt: Int, jitter: inout some RandomNumberGenerator) -> Duration {
        // 53 random bits scaled by 2^−53 (a literal: `1 << 53` is 0 with a 32-bit `Int`).
        let factor = 0.5 + Double(jitter.next() >> 11) * 0x1p-53 / 2
        return delay(afterAttempt: attempt) * factor
    }
}
