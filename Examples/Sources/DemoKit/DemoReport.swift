public import Conductor

/// How one run of the demo went: the timeline, the numbers, and the verdict.
public struct DemoReport: Sendable {
    public let options: DemoOptions
    public let timeline: Timeline
    /// From the demo's start until start-up's readiness set `ready` was (the version check
    /// may still be running).
    public let launchTime: Duration
    /// The launcher's own report; times count from the launch's start.
    public let launchReport: RunReport
    /// The page run's own report; times count from the page's start.
    public let pageReport: RunReport
    /// The page's milestones in the order they were reached, on the demo's clock.
    public let milestones: [(name: String, at: Duration)]
    /// How the page's run ended.
    public let pageOutcome: RunOutcome
    public let network: NetworkSummary
    /// How the wait for the three downloads ended.
    public let media: String
    /// Start-up's critical path, then the page's.
    public let criticalPath: [String]
    /// Page calls answered from the cache.
    public let pageCallsFromCache: Int
    public let pageCalls: Int
    /// One request's spans, as the tracer received them.
    public let spanTree: SpanTree
    /// Every metric series the visit recorded.
    public let metrics: [MetricRow]
    /// One sentence: what the scenario showed, and whether it went as it should.
    public let verdict: String
    /// Whether the scenario behaved as it should (a failure scenario passes when its failures
    /// were handled).
    public let passed: Bool

    /// When a milestone was reached.
    public func milestone(_ name: String) -> Duration? {
        milestones.first { $0.name == name }?.at
    }
}
