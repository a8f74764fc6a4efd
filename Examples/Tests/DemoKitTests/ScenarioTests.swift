import DemoKit
import Testing

/// The demo's scenarios, driven as functions against the embedded server, a tenth of the
/// real latencies. They check outcomes, never timings.
@Suite(.serialized) struct ScenarioTests {
    static func run(_ scenario: Scenario) async throws -> DemoReport {
        try await runDemo(DemoOptions(scenario: scenario, seed: 7, latencyScale: 0.1))
    }

    static func expectMilestonesInOrder(_ report: DemoReport) {
        #expect(report.milestones.map(\.name) == ["firstScreen", "fullPage"])
        if let first = report.milestone("firstScreen"), let full = report.milestone("fullPage") {
            #expect(first <= full)
        }
    }

    @Test func normalLoadsEveryCallWithoutARefresh() async throws {
        let report = try await Self.run(.normal)
        #expect(report.passed, "\(report.verdict)")
        Self.expectMilestonesInOrder(report)
        #expect(report.network.refreshes == 0)
        #expect(report.network.everyRequestEndedOnce)
        #expect(report.network.coalesced == 1)
        #expect(report.timeline.rows.filter { $0.group != "network" }.allSatisfy { $0.outcome != .failed })
    }

    @Test func tokenExpiryRefreshesExactlyOnceWhileTheOtherCallsWait() async throws {
        let report = try await Self.run(.tokenExpiry)
        #expect(report.passed, "\(report.verdict)")
        Self.expectMilestonesInOrder(report)
        #expect(report.network.refreshes == 1)
        #expect(report.network.failedRefreshes == 0)
        #expect(report.network.parked > 0)
        #expect(report.network.everyRequestEndedOnce)
        #expect(report.timeline.markers.filter { $0.kind == .refresh }.count == 1)
        // Every page call still succeeded: the parked ones were sent again with the new token.
        let stages: Set = ["basics", "sale", "shipping", "extras"]
        #expect(report.timeline.rows.filter { stages.contains($0.group) }.allSatisfy { $0.outcome == .succeeded })
    }

    @Test func aRefusedRefreshFailsTheWaitingCallsOnceAndSignsOut() async throws {
        let report = try await Self.run(.refreshFails)
        #expect(report.passed, "\(report.verdict)")
        #expect(report.milestones.first?.name == "firstScreen")
        #expect(report.network.refreshes == 1)
        #expect(report.network.failedRefreshes == 1)
        #expect(report.network.everyRequestEndedOnce)
        // Every page task has exactly one row, whatever it ended with.
        let pageRows = report.timeline.rows.filter { ["basics", "sale", "shipping", "extras"].contains($0.group) }
        #expect(pageRows.count == Set(pageRows.map(\.name)).count)
        #expect(pageRows.contains { $0.detail.contains("refresh failed") })
        // After signing out, the extras were never sent.
        let extras = pageRows.filter { $0.group == "extras" }
        #expect(!extras.isEmpty && extras.allSatisfy { $0.outcome == .failed && $0.detail.contains("not s") })
    }

    @Test func aSlowNetworkRetriesAndTheMediaWaitGivesUpAtItsLimit() async throws {
        let report = try await Self.run(.slowNetwork)
        #expect(report.passed, "\(report.verdict)")
        #expect(report.network.retries > 0)
        #expect(report.network.everyRequestEndedOnce)
        let media = try #require(report.timeline.rows.first { $0.name == "media" })
        #expect(media.outcome == .timedOut)
        #expect(report.timeline.rows.filter { $0.group == "media" }.count == 3)
    }

    @Test func offlineServesThePageFromTheCache() async throws {
        let report = try await Self.run(.offlineWithCache)
        #expect(report.passed, "\(report.verdict)")
        Self.expectMilestonesInOrder(report)
        #expect(report.pageCalls > 0)
        #expect(report.pageCallsFromCache == report.pageCalls)
        #expect(report.network.servedFromCache > 0)
        #expect(report.network.everyRequestEndedOnce)
    }
}
