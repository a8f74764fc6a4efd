import Testing

@testable import DemoKit

/// What new users tripped over in their first hour with the demo.
@Suite struct PapercutTests {
    // MARK: - --latency-scale

    @Test(arguments: [0, -1, Double.nan, .infinity])
    func aLatencyScaleThatIsNotAPositiveNumberIsRejected(scale: Double) {
        #expect(DemoOptions.latencyScaleProblem(scale) != nil)
    }

    @Test func theRejectionSaysWhatIsExpectedAndWhatCame() {
        #expect(
            DemoOptions.latencyScaleProblem(0)
                == "--latency-scale must be a number greater than 0, such as 0.1 for ten times faster (got 0.0)")
        #expect(DemoOptions.latencyScaleProblem(0.1) == nil)
    }

    // MARK: - Markers

    /// The launch's ready marker is named "ready", and read "◆ ready: ready".
    @Test func aMarkerWhoseNameIsItsKindSaysItOnce() {
        #expect(Timeline.Marker(kind: .ready, name: "ready", at: .zero).label == "ready")
        #expect(Timeline.Marker(kind: .milestone, name: "firstScreen", at: .zero).label == "milestone firstScreen")
    }

    // MARK: - Verdict

    /// The verdict said "all N calls loaded" whatever had happened to them.
    @Test func theVerdictCountsTheCallsThatLoaded() {
        #expect(Verdict.loaded(12, of: 12) == "all 12 calls loaded")
        #expect(Verdict.loaded(10, of: 12) == "10 of 12 calls loaded, 2 did not")
        #expect(Verdict.refreshes(0) == "no refresh")
        #expect(Verdict.refreshes(1) == "exactly one refresh")
        #expect(Verdict.refreshes(3) == "3 refreshes")
    }
}
