/// Exponential backoff with jitter, drawn from a seedable generator so tests can replay it.
struct Backoff {
    let initial: Duration
    let maximum: Duration
    private var generator: SplitMix64

    init(initial: Duration, maximum: Duration, seed: UInt64?) {
        self.initial = initial
        self.maximum = maximum
        self.generator = SplitMix64(seed: seed ?? UInt64.random(in: .min ... .max))
    }

    /// The delay after failed attempt `attempt` (1-based): `initial · 2^(attempt-1)`, capped,
    /// then scaled by a random factor in [0.5, 1) so callers that failed together spread out.
    mutating func delay(afterAttempt attempt: Int) -> Duration {
        var delay = initial
        for _ in 1..<max(1, attempt) where delay < maximum { delay *= 2 }
        delay = min(delay, maximum)
        // 53 random bits scaled by 2^−53 (a literal: `1 << 53` is 0 with a 32-bit `Int`).
        let factor = 0.5 + Double(generator.next() >> 11) * 0x1p-53 / 2
        return delay * factor
    }
}
