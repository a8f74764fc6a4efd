/// What the demo's world does to the app: how the network behaves and what the server does
/// to the token.
public enum Scenario: String, CaseIterable, Sendable, CustomStringConvertible {
    /// A healthy network; the token lasts the whole visit.
    case normal
    /// The token expires in the middle of the page: one refresh, the other calls wait for it.
    case tokenExpiry = "token-expiry"
    /// The token expires and the refresh is refused (the login expired): the parked calls fail
    /// once each, and the app signs out instead of sending anything with the old token.
    case refreshFails = "refresh-fails"
    /// Three times slower, with overloaded endpoints answering 503: retries, and a media
    /// download that misses the two-second limit.
    case slowNetwork = "slow-network"
    /// A visit yesterday filled the cache; today both mirrors are unreachable and the page is
    /// served from the cache.
    case offlineWithCache = "offline-with-cache"

    public var description: String { rawValue }
}

/// How to run the demo.
public struct DemoOptions: Sendable {
    public var scenario: Scenario
    /// Seeds the server's latencies and the gate's backoff jitter.
    public var seed: UInt64
    /// Multiplies every server latency and every time limit of the app (the two-second media
    /// limit, backoffs), so tests can run the same story in a fraction of the time.
    public var latencyScale: Double

    public init(scenario: Scenario = .tokenExpiry, seed: UInt64 = 7, latencyScale: Double = 1) {
        self.scenario = scenario
        self.seed = seed
        self.latencyScale = latencyScale
    }

    /// Why `latencyScale` cannot be used, or `nil` if it can: a scale of 0 or below would
    /// squeeze every time limit to nothing, and the run would contradict its own verdict.
    public static func latencyScaleProblem(_ latencyScale: Double) -> String? {
        guard latencyScale > 0, latencyScale.isFinite else {
            return "--latency-scale must be a number greater than 0, such as 0.1 for ten times faster "
                + "(got \(latencyScale))"
        }
        return nil
    }

    /// `duration` scaled by ``latencyScale``.
    func scaled(_ duration: Duration) -> Duration {
        duration * max(0.001, latencyScale)
    }
}
