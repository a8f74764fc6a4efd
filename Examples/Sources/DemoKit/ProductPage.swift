import Conductor
import HTTPTypes

/// The product-detail page as a staged schedule: the first screen's calls first, then
/// shipping, then the extras and the media, with the milestones `firstScreen` and `fullPage`.
struct ProductPage {
    let api: ShopAPI
    let media: MediaLoader
    let notes = CallNotes()
    /// Set when a call learns that the login expired: later calls are not sent.
    private let signedOut = Guarded(false)

    init(api: ShopAPI, media: MediaLoader) {
        self.api = api
        self.media = media
    }

    /// Every stage's name, by task id.
    static let stageOfTask: [String: String] = {
        var stages: [String: String] = ["media": "extras"]
        for (stage, calls) in [
            ("basics", PageCatalog.basics), ("sale", PageCatalog.sale), ("shipping", PageCatalog.shipping),
            ("extras", PageCatalog.extras),
        ] {
            for call in calls { stages[call.name] = stage }
        }
        return stages
    }()

    var schedule: Schedule {
        Schedule {
            Stage("basics") { for call in PageCatalog.basics { step(call, failure: .required) } }
            Stage("sale") { for call in PageCatalog.sale { step(call, failure: .required) } }
            Milestone("firstScreen")
            Stage("shipping") { for call in PageCatalog.shipping { step(call, failure: .optional) } }
            Stage("extras") {
                for call in PageCatalog.extras { step(call, failure: .optional) }
                Step("media", options: TaskOptions(failure: .optional)) { _ in try await loadMedia() }
            }
            Milestone("fullPage")
        }
    }

    /// Starts the page.
    func start(telemetry: Telemetry) throws -> GraphRun {
        try schedule.start(telemetry: telemetry)
    }

    private func step(_ call: PageCall, failure: FailurePolicy) -> Step {
        Step(call.name, options: TaskOptions(failure: failure)) { _ in
            let request = "GET \(call.path) · \(call.importance.lane)"
            guard !signedOut.withLock({ $0 }) else {
                notes.note(call.name, "\(request) · not sent: signed out")
                throw SignedOut()
            }
            do {
                let reply = try await api.get(call)
                if reply.isFromCache {
                    notes.note(call.name, "\(request) · from cache", outcome: .fromCache)
                } else {
                    notes.note(call.name, "\(request) · \(reply.response.status.code)")
                }
            } catch let error as GateError {
                notes.note(call.name, "\(request) · \(error.message)")
                if error.code == .refreshFailed {
                    // The login itself expired: nothing else on this page can succeed. Sign out
                    // rather than send anything more with the old token. (Calls already on the
                    // wire are left to end: on Linux, cancelling a URLSession call as it
                    // completes can deadlock inside FoundationNetworking.)
                    signedOut.withLock { $0 = true }
                }
                throw error
            }
        }
    }

    private func loadMedia() async throws {
        guard !signedOut.withLock({ $0 }) else {
            notes.note("media", "not started: signed out")
            throw SignedOut()
        }
        switch try await media.loadAll() {
        case .completed(let stash):
            notes.note("media", "\(stash.count) of 3 downloads in time")
        case .timedOut(let stash, let missing):
            notes.note(
                "media", "limit reached: \(stash.count) of 3 in time, gave up on \(missing.joined(separator: ", "))",
                outcome: .timedOut)
        case .cancelled:
            throw CancellationError()
        }
    }
}

/// The app signed out after the token refresh was refused.
struct SignedOut: Error, CustomStringConvertible {
    var description: String { "signed out: the login expired" }
}
