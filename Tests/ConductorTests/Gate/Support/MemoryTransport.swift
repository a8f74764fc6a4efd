import Conductor
import HTTPTypes
import Synchronization

/// An in-memory server: accepts `Bearer <current>` and answers from a script of statuses,
/// and counts what it received. Answers 401 to any other token.
final class MemoryTransport: GateTransport {
    struct State {
        var validToken: String?
        var script: [HTTPResponse.Status] = []
        var failuresToThrow = 0
        var sends: [(path: String, token: String?)] = []
    }

    let state: Lock<State>

    init(validToken: String?) { state = Lock(State(validToken: validToken)) }

    var sends: [(path: String, token: String?)] { state.withLock { $0.sends } }

    func send(_ request: HTTPRequest, body: GateRequestBody?) async throws -> GateTransportResponse {
        let token = request.headerFields[.authorization].map { String($0.dropFirst("Bearer ".count)) }
        let outcome = state.withLock { state -> HTTPResponse.Status? in
            state.sends.append((request.path ?? "", token))
            if state.failuresToThrow > 0 {
                state.failuresToThrow -= 1
                return nil
            }
            guard token != nil, token == state.validToken else { return .unauthorized }
            return state.script.isEmpty ? .ok : state.script.removeFirst()
        }
        guard let status = outcome else { throw TransportDown() }
        var response = HTTPResponse(status: status)
        if status == .tooManyRequests { response.headerFields[.retryAfter] = "3" }
        return GateTransportResponse(response: response, body: Array((request.path ?? "").utf8))
    }
}

struct TransportDown: Error {}

/// Issues tokens `t1`, `t2`, … and makes each the transport's only valid one.
final class MemoryAuthority: Sendable {
    private let state = Lock((issued: 0, failing: false))
    let transport: MemoryTransport

    init(transport: MemoryTransport) { self.transport = transport }

    var issued: Int { state.withLock { $0.issued } }

    func setFailing(_ failing: Bool) { state.withLock { $0.failing = failing } }

    func refresh() throws -> String {
        let token = try state.withLock { state -> String in
            if state.failing { throw TransportDown() }
            state.issued += 1
            return "t\(state.issued)"
        }
        transport.state.withLock { $0.validToken = token }
        return token
    }

    func expire() { transport.state.withLock { $0.validToken = nil } }
}
