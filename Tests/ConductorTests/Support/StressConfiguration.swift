import Conductor
import Foundation

/// How hard the stress and property tests push: `CONDUCTOR_STRESS=<iterations>` in the
/// environment, or a small default so that a plain `swift test` stays fast.
///
/// ```swift
/// for iteration in 0..<StressConfiguration.iterations(default: 200) { … }
/// // CONDUCTOR_STRESS=20000 swift test --filter Stress
/// ```
///
/// `CONDUCTOR_SEED=<n>` pins the seed of seeded tests, to replay a failure whose message
/// printed that seed.
enum StressConfiguration {
    /// `CONDUCTOR_STRESS`, or 10 when it is unset or not a positive integer.
    static var iterations: Int { iterations(default: 10) }

    /// `CONDUCTOR_STRESS`, or `fallback` when it is unset or not a positive integer.
    static func iterations(default fallback: Int) -> Int {
        guard let text = ProcessInfo.processInfo.environment["CONDUCTOR_STRESS"],
            let value = Int(text), value > 0
        else { return fallback }
        return value
    }

    /// The first seed of a loop of iterations: `CONDUCTOR_SEED`, or a fixed one, so a failing
    /// iteration's printed seed replays it as the first of a one-iteration run.
    static var baseSeed: UInt64 {
        ProcessInfo.processInfo.environment["CONDUCTOR_SEED"].flatMap(UInt64.init) ?? 0xC0DE
    }

    /// The seeds a seeded test runs: `CONDUCTOR_SEED` alone when it is set, else `count`
    /// seeds derived from `base`, so every run of the suite explores the same cases.
    static func seeds(_ count: Int, base: UInt64) -> [UInt64] {
        if let text = ProcessInfo.processInfo.environment["CONDUCTOR_SEED"], let seed = UInt64(text) {
            return [seed]
        }
        var generator = SeededGenerator(seed: base)
        return (0..<count).map { _ in generator.next() }
    }
}
