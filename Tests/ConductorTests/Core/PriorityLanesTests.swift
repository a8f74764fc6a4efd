import Testing

@testable import ConductorAssembly
@testable import ConductorCore
@testable import ConductorGate
@testable import ConductorGraph
@testable import ConductorHarmonizer
@testable import ConductorLaunch
@testable import ConductorReports

/// The one lane type: FIFO within a lane, highest lane first, aging, O(1) removal and raising.
@Suite struct PriorityLanesTests {
    typealias Lanes = PriorityLanes<String>

    private static func drain(_ lanes: inout Lanes, startsSoFar: inout UInt64) -> [String] {
        var order: [String] = []
        while let next = lanes.popNext(startsSoFar: startsSoFar) {
            order.append(next.payload)
            startsSoFar += 1
        }
        return order
    }

    @Test func highestLaneFirstAndFIFOWithinALane() {
        var lanes = Lanes(laneCount: 3, agingThreshold: 100)
        for (id, (name, lane)) in [("low1", 0), ("high1", 2), ("mid1", 1), ("high2", 2), ("low2", 0)].enumerated() {
            lanes.enqueue(id: UInt64(id), lane: lane, payload: name, startsSoFar: 0)
        }
        #expect(lanes.count == 5)
        #expect(lanes.count(inLane: 2) == 2)
        var starts: UInt64 = 0
        #expect(Self.drain(&lanes, startsSoFar: &starts) == ["high1", "high2", "mid1", "low1", "low2"])
        #expect(lanes.isEmpty)
    }

    @Test func anAgedHeadOvertakesHigherLanes() {
        var lanes = Lanes(laneCount: 3, agingThreshold: 2)
        lanes.enqueue(id: 0, lane: 0, payload: "low", startsSoFar: 0)
        lanes.enqueue(id: 1, lane: 2, payload: "high0", startsSoFar: 0)
        lanes.enqueue(id: 2, lane: 2, payload: "high1", startsSoFar: 0)
        lanes.enqueue(id: 3, lane: 2, payload: "high2", startsSoFar: 0)
        // Two starts after it queued, the low head has aged and goes next.
        let order = (0..<4).map { starts in lanes.popNext(startsSoFar: UInt64(starts))?.payload }
        #expect(order == ["high0", "high1", "low", "high2"])
    }

    @Test func removedAndRaisedEntriesLeaveOnlyTombstones() {
        var lanes = Lanes(laneCount: 3, agingThreshold: 100)
        lanes.enqueue(id: 0, lane: 0, payload: "a", startsSoFar: 0)
        lanes.enqueue(id: 1, lane: 0, payload: "b", startsSoFar: 0)
        lanes.enqueue(id: 2, lane: 1, payload: "c", startsSoFar: 0)
        let removed = lanes.remove(id: 2)?.payload
        let removedAgain = lanes.remove(id: 2)
        #expect(removed == "c")
        #expect(removedAgain == nil)
        let raised = lanes.raise(id: 1, to: 2)
        // Not to a lower or the same lane, and not an unknown id.
        let raisedToSame = lanes.raise(id: 1, to: 1)
        let raisedUnknown = lanes.raise(id: 9, to: 2)
        #expect(raised)
        #expect(!raisedToSame)
        #expect(!raisedUnknown)
        #expect(lanes.count(inLane: 2) == 1)
        var starts: UInt64 = 0
        #expect(Self.drain(&lanes, startsSoFar: &starts) == ["b", "a"])
    }

    @Test func removeAllGivesHighestLaneFirstAndEmpties() {
        var lanes = Lanes(laneCount: 3, agingThreshold: 100)
        lanes.enqueue(id: 0, lane: 0, payload: "low", startsSoFar: 0)
        lanes.enqueue(id: 1, lane: 1, payload: "mid", startsSoFar: 0)
        lanes.enqueue(id: 2, lane: 0, payload: "raised", startsSoFar: 0)
        _ = lanes.raise(id: 2, to: 2)
        let dropped = lanes.removeAll()
        #expect(dropped == ["raised", "mid", "low"])
        #expect(lanes.isEmpty)
        let next = lanes.popNext(startsSoFar: 0)
        #expect(next == nil)
    }
}
