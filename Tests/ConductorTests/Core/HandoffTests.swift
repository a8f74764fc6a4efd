import Testing

@testable import ConductorAssembly
@testable import ConductorCore
@testable import ConductorGate
@testable import ConductorGraph
@testable import ConductorHarmonizer
@testable import ConductorLaunch
@testable import ConductorReports

/// The small Core pieces with no concurrency of their own to drive.
@Suite struct HandoffTests {
    @Test func aHandoffGivesBackTheValueItWasMadeWith() async {
        let reply = Handoff([UInt8](repeating: 7, count: 1_000))
        let read = await Task.detached { reply.value.count }.value
        #expect(read == 1_000)
        #expect(reply.value.allSatisfy { $0 == 7 })
    }

    @Test func anAtomicCounterNeverGivesTheSameNumberTwice() async {
        let counter = AtomicCounter()
        let drawn = await withTaskGroup(of: [UInt64].self) { group in
            for _ in 0..<4 { group.addTask { (0..<250).map { _ in counter.next() } } }
            var all: [UInt64] = []
            for await numbers in group { all += numbers }
            return all
        }
        #expect(Set(drawn).count == 1_000)
        #expect(drawn.min() == 0 && drawn.max() == 999)
    }
}
