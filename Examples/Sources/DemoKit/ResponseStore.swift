import Conductor
import HTTPTypes

/// The app's response cache, on its own storage queue: the request gate stores every success
/// here and falls back to it when the network is gone.
actor ResponseStore: ResponseCache, Schedulable {
    nonisolated let executor: QueueExecutor
    private var entries: [String: GateResponse]

    init(executor: QueueExecutor, entries: [String: GateResponse] = [:]) {
        self.executor = executor
        self.entries = entries
    }

    /// Keyed by path: any mirror's answer will do.
    func response(for request: HTTPRequest) -> GateResponse? { entries[request.path ?? ""] }

    func store(_ response: GateResponse, for request: HTTPRequest) { entries[request.path ?? ""] = response }

    /// Everything stored, to carry to the next visit.
    var snapshot: [String: GateResponse] { entries }
}
