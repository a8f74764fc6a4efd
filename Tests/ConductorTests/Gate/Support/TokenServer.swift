import Conductor
import FlyingFox
import FlyingSocks
import Foundation
import Synchronization

/// A real HTTP server on 127.0.0.1 (a free port) for the gate's tests: it issues tokens,
/// expires them on command, can hold requests until released, and counts what it receives.
///
/// Routes:
/// - `POST /token`: issues `t1`, `t2`, … (or 500 while `failRefresh` is set) and makes it the
///   only accepted token.
/// - `GET /data/<anything>`: 200 with body `<path>` when `Authorization: Bearer <current>`,
///   else 401. Requests whose path starts with `/data/held` wait for ``releaseHeld()``.
final class TokenServer: Sendable {
    struct Hit: Sendable, Hashable {
        var path: String
        var token: String?
        var requestTag: String?
    }

    private struct State {
        var validToken: String?
        var issued = 0
        var refreshRequests = 0
        var failRefresh = false
        var hits: [Hit] = []
        var holding = true
        var held: [CheckedContinuation<Void, Never>] = []
        var heldWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Lock(State())
    private let server: HTTPServer
    private let runTask: Task<Void, Never>
    let port: UInt16

    /// Starts the server and waits until it listens.
    static func start() async throws -> TokenServer {
        let server = HTTPServer(address: try .inet(ip4: "127.0.0.1", port: 0), logger: .disabled)
        let runTask = Task { _ = try? await server.run() }
        try await server.waitUntilListening()
        guard case .ip4(_, port: let port)? = await server.listeningAddress else {
            throw URLError(.cannotConnectToHost)
        }
        let tokenServer = TokenServer(server: server, runTask: runTask, port: port)
        await tokenServer.installRoutes()
        return tokenServer
    }

    private init(server: HTTPServer, runTask: Task<Void, Never>, port: UInt16) {
        self.server = server
        self.runTask = runTask
        self.port = port
    }

    func stop() async {
        releaseHeld()
        await server.stop()
        runTask.cancel()
    }

    var authority: String { "127.0.0.1:\(port)" }

    // MARK: - Control and counters

    /// No token is accepted until the next refresh.
    func expireToken() { state.withLock { $0.validToken = nil } }

    func setFailRefresh(_ fail: Bool) { state.withLock { $0.failRefresh = fail } }

    /// Refresh requests received, successful or not.
    var refreshRequests: Int { state.withLock { $0.refreshRequests } }

    var tokensIssued: Int { state.withLock { $0.issued } }

    var currentToken: String? { state.withLock { $0.validToken } }

    var hits: [Hit] { state.withLock { $0.hits } }

    /// Lets every held request (and any that arrives later) through.
    func releaseHeld() {
        let held = state.withLock { state in
            state.holding = false
            defer { state.held.removeAll() }
            return state.held
        }
        for continuation in held { continuation.resume() }
    }

    /// Suspends until at least `count` requests are being held.
    func held(atLeast count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if state.held.count >= count { return true }
                state.heldWaiters.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    // MARK: - Routes

    private func installRoutes() async {
        await server.appendRoute("POST /token") { [self] _ in
            let token = state.withLock { state -> String? in
                state.refreshRequests += 1
                guard !state.failRefresh else { return nil }
                state.issued += 1
                state.validToken = "t\(state.issued)"
                return state.validToken
            }
            guard let token else { return HTTPResponse(statusCode: .internalServerError) }
            return HTTPResponse(statusCode: .ok, body: Data(token.utf8))
        }
        await server.appendRoute("GET /data/*") { [self] request in
            let authorization = request.headers[HTTPHeader("Authorization")]
            let token = authorization.map { String($0.dropFirst("Bearer ".count)) }
            let path = request.path
            if path.hasPrefix("/data/held") { await hold() }
            let accepted = state.withLock { state -> Bool in
                state.hits.append(Hit(path: path, token: token, requestTag: request.headers[HTTPHeader("X-Tag")]))
                return token != nil && token == state.validToken
            }
            guard accepted else { return HTTPResponse(statusCode: .unauthorized) }
            return HTTPResponse(statusCode: .ok, body: Data(path.utf8))
        }
    }

    private func hold() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let (holding, ready) = state.withLock { state -> (Bool, [CheckedContinuation<Void, Never>]) in
                guard state.holding else { return (false, []) }
                state.held.append(continuation)
                var ready: [CheckedContinuation<Void, Never>] = []
                state.heldWaiters.removeAll { waiter in
                    guard state.held.count >= waiter.count else { return false }
                    ready.append(waiter.continuation)
                    return true
                }
                return (true, ready)
            }
            if !holding { continuation.resume() }
            for waiter in ready { waiter.resume() }
        }
    }
}
