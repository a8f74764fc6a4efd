import Conductor
import ConductorTestKit
import HTTPTypes
import InMemoryTracing
import Tracing

/// Reading what an `InMemoryTracer` finished, for the tracing tests.
extension [FinishedInMemorySpan] {
    /// The one finished span named `name`; fails the test if there is not exactly one.
    func one(_ name: String) throws -> FinishedInMemorySpan {
        let matches = filter { $0.operationName == name }
        guard matches.count == 1 else { throw SpanLookupFailure(name: name, found: matches.count) }
        return matches[0]
    }

    func named(_ name: String) -> [FinishedInMemorySpan] { filter { $0.operationName == name } }
}

struct SpanLookupFailure: Error, CustomStringConvertible {
    let name: String
    let found: Int
    var description: String { "expected one span named \(name), found \(found)" }
}

extension FinishedInMemorySpan {
    func string(_ key: String) -> String? {
        guard case .string(let value)? = attributes[key]?.toSpanAttribute() else { return nil }
        return value
    }

    func int(_ key: String) -> Int64? {
        guard case .int64(let value)? = attributes[key]?.toSpanAttribute() else { return nil }
        return value
    }

    /// Every attribute value of the span and of its events, as text.
    var allAttributeText: [String] {
        var texts: [String] = []
        // swift-format-ignore: ReplaceForEachWithForLoop
        attributes.forEach { key, value in texts.append("\(key)=\(value)") }
        // SpanAttributes is not a Sequence: `forEach` is its only iteration.
        for attributes in events.map(\.attributes) + links.map(\.attributes) {
            // swift-format-ignore: ReplaceForEachWithForLoop
            attributes.forEach { key, value in texts.append("\(key)=\(value)") }
        }
        return texts
    }
}

/// A transport that answers from a script of statuses (then 200) to requests carrying
/// `Bearer <valid>`, 401 otherwise, and keeps every request it was given.
final class ScriptedTransport: GateTransport {
    private struct State {
        var valid: String?
        var script: [HTTPResponse.Status]
        var failures: Int
        var requests: [HTTPRequest] = []
    }

    private let state: Lock<State>

    init(valid: String?, script: [HTTPResponse.Status] = [], failures: Int = 0) {
        state = Lock(State(valid: valid, script: script, failures: failures))
    }

    var requests: [HTTPRequest] { state.withLock { $0.requests } }

    func accept(_ token: String) { state.withLock { $0.valid = token } }

    func send(_ request: HTTPRequest, body: GateRequestBody?) async throws -> GateTransportResponse {
        let status = try state.withLock { state throws(ScriptedTransportFailure) -> HTTPResponse.Status in
            state.requests.append(request)
            if state.failures > 0 {
                state.failures -= 1
                throw ScriptedTransportFailure()
            }
            guard let valid = state.valid, request.headerFields[.authorization] == "Bearer \(valid)" else {
                return .unauthorized
            }
            return state.script.isEmpty ? .ok : state.script.removeFirst()
        }
        return GateTransportResponse(response: HTTPResponse(status: status), body: [])
    }
}

/// A cache holding one response for every request.
struct FixedCache: ResponseCache {
    func response(for request: HTTPRequest) async -> GateResponse? {
        GateResponse(response: HTTPResponse(status: .ok), body: Array("cached".utf8))
    }

    func store(_ response: GateResponse, for request: HTTPRequest) async {}
}

struct TelemetryTestFailure: Error {}
struct ScriptedTransportFailure: Error {}

/// A scripted transport that answers only once the test opens `release`.
final class LatchedTransport: GateTransport {
    let release = Latch()
    let inner: ScriptedTransport

    init(_ inner: ScriptedTransport) { self.inner = inner }

    func send(_ request: HTTPRequest, body: GateRequestBody?) async throws -> GateTransportResponse {
        await release.wait()
        return try await inner.send(request, body: body)
    }
}
