import Conductor
import Synchronization
import Testing

@testable import DemoKit

/// The token refresh is told as it happens, from the gate's events: its start, the calls
/// parked behind it and its end come in that order, before the page's `fullPage`.
@Suite struct LiveProgressTests {
    /// Every progress event of a run, in the order the demo reported them.
    final class Events: Sendable {
        private let events = Mutex<[ProgressEvent]>([])
        func append(_ event: ProgressEvent) { events.withLock { $0.append(event) } }
        var all: [ProgressEvent] { events.withLock { $0 } }
    }

    // MARK: - The whole demo

    /// The lines follow the gate's journal order, so start, parked calls and end can come in
    /// no other; `fullPage` needs the parked calls sent again after the refresh, and a milestone
    /// first logs every gate event journaled before it, so the end is always told before it.
    @Test func theRefreshIsReportedWhileThePageLoadsStartBeforeEnd() async throws {
        let events = Events()
        let report = try await runDemo(DemoOptions(scenario: .tokenExpiry, seed: 7, latencyScale: 0.1)) {
            events.append($0)
        }
        #expect(report.passed, "\(report.verdict)")
        let all = events.all
        let start = all.firstIndex {
            if case .started("network", "token refresh 1", _) = $0 { return true }
            return false
        }
        let end = all.firstIndex {
            if case .ended("network", "token refresh 1", .succeeded, _, _) = $0 { return true }
            return false
        }
        let fullPage = all.firstIndex {
            if case .marker(let marker) = $0 { return marker.name == "fullPage" }
            return false
        }
        let waiting = all.indices.filter {
            if case .waiting(_, _, "token refresh 1", _) = all[$0] { return true }
            return false
        }
        let (s, e, f) = (try #require(start), try #require(end), try #require(fullPage))
        #expect(s < e)
        #expect(e < f, "the refresh's end must be told before fullPage, not after the page")
        #expect(waiting.count == report.network.parked)
        #expect(waiting.allSatisfy { s < $0 && $0 < e })

        // The parked calls wait in the timeline too, inside their rows.
        let parked = report.timeline.rows.filter { $0.waits.contains { $0.kind == .parked } }
        #expect(parked.count == report.network.parked)
        for row in parked {
            for wait in row.waits {
                #expect(row.start <= wait.start && wait.start <= wait.end && wait.end <= row.end)
            }
        }
        #expect(TextTimeline.render(report.timeline).contains("░"))
    }

    // MARK: - GateTrack, event by event

    @Test func aRefreshOpensWhenItStartsAndClosesWithItsRowAndMarker() {
        var track = GateTrack()
        #expect(track.take(.initial(request: 1, name: "GET /shipping/freight", priority: .default), at: .zero) == nil)
        #expect(track.take(.initial(request: 2, name: "GET /store/info", priority: .default), at: .zero) == nil)
        #expect(track.take(.queued(request: 2, priority: .default), at: .milliseconds(1)) == nil)
        #expect(track.take(.running(request: 1, attempt: 1, credentialVersion: 1), at: .milliseconds(2)) == nil)
        #expect(
            track.take(.refreshStarted(fromVersion: 1, request: 1), at: .milliseconds(10))
                == .refreshStarted(name: "token refresh 1", at: .milliseconds(10), startedBy: "freight"))
        #expect(
            track.take(.redirect(request: 1, credentialVersion: 1), at: .milliseconds(10))
                == .parked(group: "shipping", name: "freight", refresh: "token refresh 1", at: .milliseconds(10)))
        #expect(
            track.take(.redirect(request: 2, credentialVersion: 1), at: .milliseconds(12))
                == .parked(group: "shipping", name: "storeInfo", refresh: "token refresh 1", at: .milliseconds(12)))
        guard case .refreshEnded(let row, let marker) = track.take(.refreshSucceeded(version: 2), at: .milliseconds(50))
        else {
            Issue.record("a refresh's end gives its row")
            return
        }
        #expect(row.group == "network" && row.start == .milliseconds(10) && row.end == .milliseconds(50))
        #expect(row.detail.contains("v1 → v2") && row.detail.contains("2 calls waited"))
        #expect(marker.kind == .refresh && marker.at == .milliseconds(10) && marker.end == .milliseconds(50))
        _ = track.take(.running(request: 1, attempt: 2, credentialVersion: 2), at: .milliseconds(51))
        _ = track.take(.failure(request: 2, code: .cancelled), at: .milliseconds(52))

        #expect(
            track.waits["freight"] == [Timeline.Wait(kind: .parked, start: .milliseconds(10), end: .milliseconds(51))])
        #expect(
            track.waits["storeInfo"] == [
                Timeline.Wait(kind: .queued, start: .milliseconds(1), end: .milliseconds(12)),
                Timeline.Wait(kind: .parked, start: .milliseconds(12), end: .milliseconds(52)),
            ])
    }

    @Test func aRefusedRefreshEndsAsAFailedRowAndMarker() {
        var track = GateTrack()
        _ = track.take(.initial(request: 1, name: "GET /product/basic", priority: .high), at: .zero)
        _ = track.take(.refreshStarted(fromVersion: 1, request: 1), at: .milliseconds(5))
        guard case .refreshEnded(let row, let marker) = track.take(.refreshFailed(fromVersion: 1), at: .milliseconds(9))
        else {
            Issue.record("a refused refresh's end gives its row")
            return
        }
        #expect(row.outcome == .failed && marker.kind == .refreshFailed)
        // A second end without a start is not a refresh.
        #expect(track.take(.refreshFailed(fromVersion: 1), at: .milliseconds(10)) == nil)
    }
}
