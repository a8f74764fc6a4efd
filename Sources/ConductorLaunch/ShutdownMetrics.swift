import CoreMetrics

/// A launcher's shutdown metrics (names in the Metrics article), recorded once from its
/// ``ShutdownReport``, before anyone waiting for the report wakes; the report's own times, so
/// no clock is read for them.
struct ShutdownMetrics {
    private let factory: any MetricsFactory

    /// `nil` when `telemetry` records no metrics.
    init?(_ telemetry: Telemetry) {
        guard let factory = telemetry.activeMetrics else { return nil }
        self.factory = factory
    }

    func record(_ report: ShutdownReport) {
        // Undos cut short are no failure, as in `isSuccess`; the undo counter names them.
        let outcome = report.isSuccess ? "succeeded" : "failed"
        Counter(label: Name.shutdowns, dimensions: [("outcome", outcome)], factory: factory).increment()
        Timer(label: Name.shutdownDuration, factory: factory).recordNanoseconds(report.duration.nanoseconds)
        let undoDuration = Timer(label: Name.undoDuration, factory: factory)
        for undo in report.undos {
            Counter(label: Name.undos, dimensions: [("outcome", Self.outcome(undo.outcome))], factory: factory)
                .increment()
            undoDuration.recordNanoseconds(undo.duration.nanoseconds)
        }
    }

    private static func outcome(_ outcome: UndoOutcome) -> String {
        switch outcome {
        case .undone: "undone"
        case .failed: "failed"
        case .timedOut: "timed_out"
        case .cancelled: "cancelled"
        }
    }

    enum Name {
        static let shutdowns = "conductor_launch_shutdowns_total"
        static let shutdownDuration = "conductor_launch_shutdown_duration_seconds"
        static let undos = "conductor_launch_undos_total"
        static let undoDuration = "conductor_launch_undo_duration_seconds"
    }
}
