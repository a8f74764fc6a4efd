import HTTPTypes
import Logging

/// A gate's log, when it has a logger: every event as a line (``GateEvent/log(to:)``), and on
/// a request's lines the request's facts that its events do not carry — its method, host and
/// path (never the query, never a header), the metadata its caller passed to `send`, and, on a
/// retry or a failure line, the reason.
///
/// A request's facts are kept from the moment its flight opens to the moment its flight's task
/// ends. A caller that joins another's flight has no lines of its own but `coalesced`: the
/// flight's lines carry the facts of the caller that opened it.
final class GateRequestLog: Sendable {
    private struct Entry {
        var metadata: Logger.Metadata
        /// Why the request's latest retry happened, for that line.
        var retry: String?
        /// Why the request failed, when its own task ended it.
        var failure: String?
    }

    let logger: Logger
    private let entries = Lock<[UInt64: Entry]>([:])

    init(_ logger: Logger) {
        self.logger = logger
    }

    /// Keeps request `id`'s facts, before any event of its flight is told.
    func open(_ id: UInt64, _ request: HTTPRequest, metadata: Logger.Metadata) {
        var facts = metadata
        facts["method"] = "\(request.method.rawValue)"
        if let authority = request.authority {
            // Never the user information an authority may carry.
            facts["host"] = "\(authority.split(separator: "@", omittingEmptySubsequences: false).last ?? "")"
        }
        facts["path"] = "\(request.gatePath)"
        entries.withLock { $0[id] = Entry(metadata: facts) }
    }

    /// The reason the next retry line of request `id` gives.
    func noteRetry(_ id: UInt64, reason: String) {
        entries.withLock { $0[id]?.retry = reason }
    }

    /// The reason the failure line of request `id` gives.
    func noteFailure(_ id: UInt64, reason: String) {
        entries.withLock { $0[id]?.failure = reason }
    }

    /// Request `id`'s flight ended: its facts are let go.
    func close(_ id: UInt64) {
        entries.withLock { $0[id] = nil }
    }

    /// Logs one transition's events, each with its request's facts.
    func log(_ events: [GateEvent]) {
        for event in events {
            guard let id = event.requestID, let entry = entries.withLock({ $0[id] }) else {
                event.log(to: logger)
                continue
            }
            var context = entry.metadata
            switch event {
            case .retry: if let reason = entry.retry { context["reason"] = "\(reason)" }
            case .failure(_, let code): context["reason"] = "\(entry.failure ?? Self.reason(code))"
            default: break
            }
            event.log(to: logger, context: context)
        }
    }

    /// The reason of a failure that the request's own task did not decide.
    private static func reason(_ code: GateError.Code) -> String {
        switch code {
        case .cancelled: "cancelled by its caller"
        case .shutDown: "the gate was shut down"
        default: "\(code)"
        }
    }
}

extension HTTPRequest {
    /// Method and path without the query, where tokens sometimes hide: how the gate's errors,
    /// events and spans name a request.
    var gateName: String {
        method.rawValue + " " + gatePath
    }

    /// The path without the query.
    var gatePath: Substring {
        let path = self.path ?? "/"
        return path[..<(path.firstIndex(of: "?") ?? path.endIndex)]
    }
}
