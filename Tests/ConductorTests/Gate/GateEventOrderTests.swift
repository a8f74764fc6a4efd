import Testing

@testable import ConductorAssembly
@testable import ConductorCore
@testable import ConductorGate
@testable import ConductorGraph
@testable import ConductorHarmonizer
@testable import ConductorLaunch
@testable import ConductorReports

@Suite struct GateEventOrderTests {
    /// Regression: a request's final event was journaled after its caller had returned, so a
    /// `shutdown()` right after the last call could lose it.
    @Test func aRequestsFinalEventIsJournaledBeforeItsCallerReturns() async throws {
        for index in 0..<200 {
            let authority = MemoryAuthority(transport: MemoryTransport(validToken: nil))
            let gate = try RequestGateTests.makeGate(authority)
            _ = try await gate.send(RequestGateTests.get("/item/\(index)"))
            let ended = gate.recordedEvents.contains { event in
                if case .success = event { return true }
                return false
            }
            #expect(ended, "request \(index) returned before its success event")
            gate.shutdown()
        }
    }
}
