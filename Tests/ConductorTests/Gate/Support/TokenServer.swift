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
/// - `POST /login`: a sign-in, needing no credential: issues `s1`, `s2`, … and makes it the
///   only accepted token.
/// - `GET /public/<anything>`: 200, credential or not (recorded in ``publicHits``).
///
/// Started with ``Faults``, it also misbehaves on `/data/*`, as drawn from a seeded generator.
final class TokenServer: Sendable {
    /// What a fault-injecting server does to `/data/*` requests, drawn per request, in arrival
    /// order, from `seed`. Rates are probabilities, tried in the order listed; what is left
    /// is answered normally.
    struct Faults: Sendable {
        var seed: UInt64
        /// Each answer waits this long first (server-side latency, in milliseconds).
        var latencyMilliseconds: ClosedRange<Int> = 0...0
        /// Expires the current token, then answers 401.
        var unauthorized = 0.0
        /// Answers 429 with one of `retryAfterSeconds` as `Retry-After`.
        var tooManyRequests = 0.0
        var retryAfterSeconds: [Int] = [0]
        /// Answers 500.
        var serverError = 0.0
        /// Writes the response head, then closes the socket before the body it promised.
        var drop = 0.0
        /// A normal answer whose body dribbles out a few bytes at a time.
        var slowBody = 0.0
    }

    enum Fault: Hashable, Sendable {
        case unauthorized, tooManyRequests, serverError, drop, slowBody
    }
    struct Hit: Sendable, Hashable {
        var path: String
        var token: String?
        var requestTag: String?
        /// The newest token issued when the request arrived.
        var newest: String? = nil
    }

    fileprivate struct State {
        var validToken: String?
        /// The newest token issued, by a refresh or a login.
        var newest: String?
        var issued = 0
        var logins = 0
        var publicHits: [Hit] = []
        var refreshRequests = 0
        var failRefresh = false
        var hits: [Hit] = []
        var faults: Faults?
        var generator = SeededGenerator(seed: 0)
        var injected: [Fault: Int] = [:]
        var receivedPerToken: [String: Int] = [:]
        var holding = true
        var held: [CheckedContinuation<Void, Never>] = []
        var heldWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Lock(State())
    private let server: HTTPServer
    private let runTask: Task<Void, Never>
    let port: UInt16

    /// Starts the server and waits until it listens.
    static func start(faults: Faults? = nil) async throws -> TokenServer {
        let server = HTTPServer(address: try .inet(ip4: "127.0.0.1", port: 0), logger: .disabled)
        let runTask = Task { _ = try? await server.run() }
        // Generous: under the thread sanitizer on 2 busy cores, starting can take seconds. A guard, not a timing test.
        try await server.waitUntilListening(timeout: 120)
        guard case .ip4(_, port: let port)? = await server.listeningAddress else {
            throw URLError(.cannotConnectToHost)
        }
        let tokenServer = TokenServer(server: server, runTask: runTask, port: port)
        if let faults {
            tokenServer.state.withLock { state in
                state.faults = faults
                state.generator = SeededGenerator(seed: faults.seed)
            }
            tokenServer.releaseHeld()
        }
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

    /// `GET /public/*` requests received.
    var publicHits: [Hit] { state.withLock { $0.publicHits } }

    /// How many faults of each kind the server injected.
    var injected: [Fault: Int] { state.withLock { $0.injected } }

    /// `/data/*` requests received per token (`"none"` for none), faults included.
    var receivedPerToken: [String: Int] { state.withLock { $0.receivedPerToken } }

    /// Holds `/data/held*` requests again until the next `releaseHeld()`.
    func startHolding() { state.withLock { $0.holding = true } }

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

    /// The routes hold the server weakly: the HTTP server keeps its routes, and routes that
    /// kept this object would make a cycle that outlives the test (LeakSanitizer reported
    /// every server started).
    private func installRoutes() async {
        await server.appendRoute("POST /token") { [weak self] _ in
            guard let self else { return HTTPResponse(statusCode: .serviceUnavailable) }
            let token = state.withLock { state -> String? in
                state.refreshRequests += 1
                guard !state.failRefresh else { return nil }
                state.issued += 1
                state.validToken = "t\(state.issued)"
                state.newest = state.validToken
                return state.validToken
            }
            guard let token else { return HTTPResponse(statusCode: .internalServerError) }
            return HTTPResponse(statusCode: .ok, body: Data(token.utf8))
        }
        await server.appendRoute("POST /login") { [weak self] _ in
            guard let self else { return HTTPResponse(statusCode: .serviceUnavailable) }
            let token = state.withLock { state -> String in
                state.logins += 1
                state.validToken = "s\(state.logins)"
                state.newest = state.validToken
                return "s\(state.logins)"
            }
            return HTTPResponse(statusCode: .ok, body: Data(token.utf8))
        }
        // `/moved/302-307`: a 302 to `/moved/307`, which is a 307 to `/public/landed`.
        await server.appendRoute("GET /moved/*") { request in HTTPResponse.redirect(hops: request.path) }
        await server.appendRoute("GET /public/*") { [weak self] request in
            guard let self else { return HTTPResponse(statusCode: .serviceUnavailable) }
            let authorization = request.headers[HTTPHeader("Authorization")]
            state.withLock { state in
                state.publicHits.append(
                    Hit(
                        path: request.path, token: authorization.map { String($0.dropFirst("Bearer ".count)) },
                        requestTag: request.headers[HTTPHeader("X-Tag")], newest: state.newest))
            }
            return HTTPResponse(statusCode: .ok, body: Data(request.path.utf8))
        }
        await server.appendRoute("GET /data/*") { [weak self] request in
            guard let self else { return HTTPResponse(statusCode: .serviceUnavailable) }
            let authorization = request.headers[HTTPHeader("Authorization")]
            let token = authorization.map { String($0.dropFirst("Bearer ".count)) }
            let path = request.path
            if path.hasPrefix("/data/held") { await hold() }
            let (accepted, plan) = state.withLock { state -> (Bool, FaultPlan?) in
                state.hits.append(
                    Hit(
                        path: path, token: token, requestTag: request.headers[HTTPHeader("X-Tag")],
                        newest: state.newest))
                state.receivedPerToken[token ?? "none", default: 0] += 1
                let plan = state.drawFault()
                if plan?.fault == .unauthorized { state.validToken = nil }
                return (token != nil && token == state.validToken, plan)
            }
            if let plan, plan.latency > .zero { try await Task.sleep(for: plan.latency) }
            let body = Array(path.utf8)
            switch plan?.fault {
            case .unauthorized?:
                return HTTPResponse(statusCode: .unauthorized)
            case .tooManyRequests?:
                return HTTPResponse(
                    statusCode: .tooManyRequests,
                    headers: HTTPHeaders([HTTPHeader("Retry-After"): "\(plan?.retryAfter ?? 0)"])
                )
            case .serverError?:
                return HTTPResponse(statusCode: .internalServerError)
            case .drop?:
                return HTTPResponse(
                    statusCode: .ok,
                    body: HTTPBodySequence(from: ScriptedBody(bytes: body, failAt: 0), count: body.count)
                )
            case .slowBody? where accepted:
                return HTTPResponse(
                    statusCode: .ok,
                    body: HTTPBodySequence(
                        from: ScriptedBody(bytes: body, chunk: 3, pause: .milliseconds(1)),
                        count: body.count
                    )
                )
            case .slowBody?, nil:
                guard accepted else { return HTTPResponse(statusCode: .unauthorized) }
                return HTTPResponse(statusCode: .ok, body: Data(body))
            }
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

/// One request's misbehaviour.
private struct FaultPlan {
    var fault: TokenServer.Fault?
    var latency: Duration
    var retryAfter: Int
}

extension TokenServer.State {
    fileprivate mutating func drawFault() -> FaultPlan? {
        guard let faults else { return nil }
        let latency = Int.random(in: faults.latencyMilliseconds, using: &generator)
        let retryAfter = faults.retryAfterSeconds.randomElement(using: &generator) ?? 0
        var roll = Double.random(in: 0..<1, using: &generator)
        var fault: TokenServer.Fault?
        let rates: [(TokenServer.Fault, Double)] = [
            (.unauthorized, faults.unauthorized), (.tooManyRequests, faults.tooManyRequests),
            (.serverError, faults.serverError), (.drop, faults.drop), (.slowBody, faults.slowBody),
        ]
        for (candidate, rate) in rates {
            if roll < rate {
                fault = candidate
                break
            }
            roll -= rate
        }
        if let fault { injected[fault, default: 0] += 1 }
        return FaultPlan(fault: fault, latency: .milliseconds(latency), retryAfter: retryAfter)
    }
}

/// A response body that dribbles out, or breaks off: the server's slow and dropped bodies.
private struct ScriptedBody: AsyncBufferedSequence {
    typealias Element = UInt8

    var bytes: [UInt8]
    var chunk = Int.max
    var pause: Duration = .zero
    /// Closes the connection once this many bytes went out.
    var failAt: Int?

    func makeAsyncIterator() -> Iterator { Iterator(body: self) }

    struct Iterator: AsyncBufferedIteratorProtocol {
        var body: ScriptedBody
        var position = 0

        mutating func next() async throws -> UInt8? {
            try await nextBuffer(suggested: 1)?.first
        }

        mutating func nextBuffer(suggested count: Int) async throws -> [UInt8]? {
            if let failAt = body.failAt, position >= failAt { throw ConnectionDropped() }
            guard position < body.bytes.count else { return nil }
            if body.pause > .zero { try await Task.sleep(for: body.pause) }
            let end = Swift.min(body.bytes.count, position + Swift.max(1, Swift.min(count, body.chunk)))
            defer { position = end }
            return Array(body.bytes[position..<end])
        }
    }
}

private struct ConnectionDropped: Error {}
