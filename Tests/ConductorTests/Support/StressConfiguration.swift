#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// How hard the stress tests push: `CONDUCTOR_STRESS` iterations (a quick pass by default,
/// so `swift test` stays fast; `scripts/stress` runs a long one under the thread sanitizer).
enum StressConfiguration {
    /// The iteration count from `CONDUCTOR_STRESS`, or `defaultCount` when it is unset.
    static func iterations(default defaultCount: Int) -> Int {
        guard let text = ProcessInfo.processInfo.environment["CONDUCTOR_STRESS"], let count = Int(text), count > 0
        else { return defaultCount }
        return count
    }

    /// A base seed from `CONDUCTOR_SEED`, to replay a failure; otherwise a fixed one.
    static var baseSeed: UInt64 {
        ProcessInfo.processInfo.environment["CONDUCTOR_SEED"].flatMap(UInt64.init) ?? 0xC0DE
    }
}
