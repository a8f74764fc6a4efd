import Conductor
import HTTPTypes

/// The page waits for three downloads, at most two seconds, with the results
/// gathered in one place however they arrive.
final class MediaLoader: Sendable {
    private let api: ShopAPI
    private let recorder: Recorder
    private let limit: Duration
    private let telemetry: Telemetry
    private let downloads = Guarded<[Task<Void, Never>]>([])

    init(api: ShopAPI, recorder: Recorder, limit: Duration, telemetry: Telemetry) {
        self.telemetry = telemetry
        self.api = api
        self.recorder = recorder
        self.limit = limit
    }

    /// Starts the three downloads and waits for them, or for the limit. Downloads still
    /// running at the limit finish unheeded: their late `leave` changes nothing.
    ///
    /// NB: they are not cancelled. On Linux, cancelling a task while its
    /// `URLSession.data(for:)` completes can deadlock inside FoundationNetworking.
    func loadAll() async throws -> Harmonizer.Outcome {
        let calls = PageCatalog.media
        let harmonizer = try Harmonizer(participants: calls.map(\.name), timeout: limit, telemetry: telemetry)
        let downloads = calls.map { call in
            Task {
                let start = recorder.now()
                recorder.report(.started(group: "media", name: call.name, at: start))
                let outcome: Timeline.Outcome
                var detail = "GET \(call.path) · \(call.importance.lane)"
                do {
                    let reply = try await api.get(call)
                    _ = harmonizer.stash(reply.body.count, as: call.name)
                    outcome = reply.isFromCache ? .fromCache : .succeeded
                    detail += reply.isFromCache ? " · from cache" : " · \(reply.response.status.code)"
                } catch let error as GateError {
                    outcome = error.code == .cancelled ? .cancelled : .failed
                    detail += " · \(error.message)"
                } catch {
                    outcome = .failed
                    detail += " · \(ErrorText.short(error))"
                }
                // A late leave after the limit returns false and changes nothing.
                let inTime = harmonizer.leave(call.name)
                if !inTime { detail += " · after the limit, ignored" }
                recorder.add(
                    Timeline.Row(
                        group: "media", name: call.name, start: start, end: recorder.now(), outcome: outcome,
                        detail: detail))
            }
        }
        self.downloads.withLock { $0 += downloads }
        return await harmonizer.outcome
    }

    /// Waits for downloads that outlived the limit, so their rows are on the timeline.
    func drain() async {
        for download in downloads.withLock({ $0 }) { await download.value }
    }
}
