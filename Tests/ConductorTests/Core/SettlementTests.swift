import Testing

@testable import ConductorAssembly
@testable import ConductorCore
@testable import ConductorGate
@testable import ConductorGraph
@testable import ConductorHarmonizer
@testable import ConductorLaunch
@testable import ConductorReports

/// The exactly-once outcome: the first settle wins, later ones change nothing.
@Suite struct SettlementTests {
    @Test func theFirstSettleWinsAndLaterOnesAreRefused() {
        var end = Settlement<String>()
        #expect(!end.isSettled)
        let first = end.settle("success")
        let second = end.settle("cancelled")
        #expect(first)
        #expect(!second)
        #expect(end.outcome == "success")
        #expect(end.isSettled)
    }
}
