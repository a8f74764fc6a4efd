import Conductor
import Foundation

/// How hard the stress and property tests push, and which seeds they run — one scheme for
/// every seeded test:
///
/// - `CONDUCTOR_STRESS=<n>`: how many seeds (or iterations) each test runs; a small default
///   keeps a plain `swift test` fast.
/// - `CONDUCTOR_SEED=<base>`: a base from which each test derives its `n` seeds (mixed with
///   the test's own base, so two tests do not share cases). `scripts/stress` sets a fresh one
///   every pass; unset, every run explores the same cases.
/// - `CONDUCTOR_REPLAY=<seed>`: run exactly that one seed — the one a failure printed.
///
/// ```swift
/// for seed in StressConfiguration.seeds(default: 200, base: 0x5EED) { … "seed \(seed)" … }
/// // CONDUCTOR_SEED=17 CONDUCTOR_STRESS=20000 swift test --filter Stress
/// // CONDUCTOR_REPLAY=<printed seed> swift test --filter <the failing suite>
/// ```
enum StressConfiguration {
    /// `CONDUCTOR_STRESS`, or `fallback` when it is unset or not a positive integer.
    static func iterations(default fallback: Int) -> Int {
        iterations(default: fallback, environment: ProcessInfo.processInfo.environment)
    }

    /// The seeds a seeded test runs (see the type's documentation).
    static func seeds(default count: Int, base: UInt64) -> [UInt64] {
        seeds(default: count, base: base, environment: ProcessInfo.processInfo.environment)
    }

    static func iterations(default fallback: Int, environment: [String: String]) -> Int {
        guard let value = environment["CONDUCTOR_STRESS"].flatMap(Int.init), value > 0 else { return fallback }
        return value
    }

    static func seeds(default count: Int, base: UInt64, environment: [String: String]) -> [UInt64] {
        if let replay = environment["CONDUCTOR_REPLAY"].flatMap(UInt64.init) { return [replay] }
        let runBase = environment["CONDUCTOR_SEED"].flatMap(UInt64.init) ?? 0
        var generator = SeededGenerator(seed: base ^ runBase)
        return (0..<iterations(default: count, environment: environment)).map { _ in generator.next() }
    }
}
