import CoreMetrics

/// Counts harmonizers' outcomes: `conductor_harmonizer_outcomes_total`, dimension `outcome`
/// (`completed`, `timed_out`, `cancelled`). Recorded once per harmonizer, outside its lock;
/// counting up and down records nothing.
package struct HarmonizerMetrics: Sendable {
    static let outcomes = "conductor_harmonizer_outcomes_total"

    private let factory: any MetricsFactory

    /// `nil` when `telemetry` records no metrics.
    package init?(_ telemetry: Telemetry) {
        guard let factory = telemetry.activeMetrics else { return nil }
        self.factory = factory
    }

    func record(_ outcome: Harmonizer.Outcome) {
        let name: String
        switch outcome {
        case .completed: name = "completed"
        case .timedOut: name = "timed_out"
        case .cancelled: name = "cancelled"
        }
        Counter(label: Self.outcomes, dimensions: [("outcome", name)], factory: factory).increment()
    }
}
