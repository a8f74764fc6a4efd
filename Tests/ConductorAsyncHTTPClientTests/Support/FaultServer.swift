import Conductor
import ConductorTestKit
import FlyingFox
import FlyingSocks
import Foundation

/// A real HTTP server on 127.0.0.1 (a free port) that misbehaves on command, for the
/// AsyncHTTPClient transport's tests. Nothing in it waits on time: what is slow waits for a
/// latch the test opens.
///
/// Routes:
/// - `POST /token`: issues `t1`, `t2`, … and makes it the only accepted token.
/// - `POST /echo`: 200 with the request's body.
/// - `GET /data/<anything>`: 200 with body `<path>` for `Authorization: Bearer <current>`,
///   else 401. A path under `/data/held` waits for ``release`` first (a slow response).
/// - `GET /public/<anything>`: 200 with body `<path>`, no credential needed.
/// - `GET /drop/<anything>`: the response head, then the connection closes (a reset).
/// - `GET /busy/<anything>`: 429 with `Retry-After: 0` the first ``busyAnswers`` times per
///   path, then 200.
/// - `GET /dribble/<anything>`: 200 whose chunked body sends `first`, opens
///   ``firstChunkSent``, and sends the rest only once ``release`` opens.
/// - `GET /large/<n>`: `n` bytes with a `Content-Length`; `GET /chunked/<n>`: `n` bytes in
///   chunks of 1000, without one. `HEAD /large/<n>`: the GET's head (`Content-Length: n`),
///   no body.
/// - `GET /bodiless/<status>/<n>`: `status` (204 or 304) with `Content-Length: n`, no body.
final class FaultServer: Sendable {
    struct Hit: Sendable, Hashable {
        var path: String
        var token: String?
    }

    private struct State {
        var validToken: String?
        var issued = 0
        var refreshRequests = 0
        var hits: [Hit] = []
        var busy: [String: Int] = [:]
        var held = 0
        var heldWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Lock(State())
    private let server: HTTPServer
    private let runTask: Task<Void, Never>
    let port: UInt16
    /// How many 429s each `/busy/*` path answers before its 200.
    let busyAnswers: Int
    /// Lets held responses and dribbled bodies go on.
    let release = Latch()
    /// Opens once a `/dribble/*` body sent its first chunk.
    let firstChunkSent = Latch()

    /// Starts the server and waits until it listens.
    static func start(busyAnswers: Int = 2) async throws -> FaultServer {
        let server = HTTPServer(address: try .inet(ip4: "127.0.0.1", port: 0), logger: .disabled)
        let runTask = Task { _ = try? await server.run() }
        // Generous: under the thread sanitizer on 2 busy cores, starting can take seconds. A guard, not a timing test.
        try await server.waitUntilListening(timeout: 120)
        guard case .ip4(_, port: let port)? = await server.listeningAddress else {
            throw URLError(.cannotConnectToHost)
        }
        let faultServer = FaultServer(server: server, runTask: runTask, port: port, busyAnswers: busyAnswers)
        await faultServer.installRoutes()
        return faultServer
    }

    private init(server: HTTPServer, runTask: Task<Void, Never>, port: UInt16, busyAnswers: Int) {
        self.server = server
        self.runTask = runTask
        self.port = port
        self.busyAnswers = busyAnswers
    }

    func stop() async {
        release.open()
        await server.stop()
        runTask.cancel()
    }

    var authority: String { "127.0.0.1:\(port)" }

    var hits: [Hit] { state.withLock { $0.hits } }

    var refreshRequests: Int { state.withLock { $0.refreshRequests } }

    /// No token is accepted until the next `POST /token`.
    func expireToken() { state.withLock { $0.validToken = nil } }

    /// Suspends until at least `count` `/data/held*` requests are waiting for ``release``.
    func held(atLeast count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if state.held >= count { return true }
                state.heldWaiters.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    // MARK: - Routes

    private func record(_ request: FlyingFox.HTTPRequest) -> String? {
        let token = request.headers[HTTPHeader("Authorization")].map { String($0.dropFirst("Bearer ".count)) }
        let hit = Hit(path: request.path, token: token)
        state.withLock { $0.hits.append(hit) }
        return token
    }

    private func installRoutes() async {
        await server.appendRoute("POST /token") { [self] _ in
            let token = state.withLock { state -> String in
                state.refreshRequests += 1
                state.issued += 1
                state.validToken = "t\(state.issued)"
                return "t\(state.issued)"
            }
            return HTTPResponse(statusCode: .ok, body: Data(token.utf8))
        }
        await server.appendRoute("POST /echo") { [self] request in
            _ = record(request)
            return HTTPResponse(statusCode: .ok, body: try await request.bodyData)
        }
        await server.appendRoute("GET /data/*") { [self] request in
            if request.path.hasPrefix("/data/held") { await hold() }
            let token = record(request)
            let accepted = state.withLock { token != nil && token == $0.validToken }
            guard accepted else { return HTTPResponse(statusCode: .unauthorized) }
            return HTTPResponse(statusCode: .ok, body: Data(request.path.utf8))
        }
        // `/moved/302-307`: a 302 to `/moved/307`, which is a 307 to `/public/landed`.
        await server.appendRoute("GET /moved/*") { request in HTTPResponse.redirect(hops: request.path) }
        await server.appendRoute("GET /public/*") { [self] request in
            _ = record(request)
            return HTTPResponse(statusCode: .ok, body: Data(request.path.utf8))
        }
        await server.appendRoute("GET /drop/*") { [self] request in
            _ = record(request)
            let body = Array(request.path.utf8)
            return HTTPResponse(
                statusCode: .ok,
                body: HTTPBodySequence(from: ScriptedBody(chunks: [], failAtEnd: true), count: body.count))
        }
        await server.appendRoute("GET /busy/*") { [self] request in
            _ = record(request)
            let busy = state.withLock { state -> Bool in
                state.busy[request.path, default: 0] += 1
                return state.busy[request.path]! <= busyAnswers
            }
            guard !busy else {
                return HTTPResponse(
                    statusCode: .tooManyRequests, headers: HTTPHeaders([HTTPHeader("Retry-After"): "0"]))
            }
            return HTTPResponse(statusCode: .ok, body: Data(request.path.utf8))
        }
        await server.appendRoute("GET /dribble/*") { [self] request in
            _ = record(request)
            let body = ScriptedBody(
                chunks: [Array("first".utf8), Array("-rest".utf8)], between: (firstChunkSent, release))
            return HTTPResponse(statusCode: .ok, body: HTTPBodySequence(from: body))
        }
        await server.appendRoute("GET /large/*") { [self] request in
            _ = record(request)
            let count = Int(request.path.split(separator: "/").last ?? "") ?? 0
            return HTTPResponse(statusCode: .ok, body: Data(repeating: 0x61, count: count))
        }
        await server.appendRoute("HEAD /large/*") { [self] request in
            _ = record(request)
            return HTTPResponse(statusCode: .ok, headers: Self.declaredLength(lastComponentOf: request.path))
        }
        await server.appendRoute("GET /bodiless/*") { [self] request in
            _ = record(request)
            let components = request.path.split(separator: "/")
            let status = components.dropLast().last.flatMap { Int($0) } ?? 204
            return HTTPResponse(
                statusCode: HTTPStatusCode(status, phrase: status == 304 ? "Not Modified" : "No Content"),
                headers: Self.declaredLength(lastComponentOf: request.path))
        }
        await server.appendRoute("GET /chunked/*") { [self] request in
            _ = record(request)
            let count = Int(request.path.split(separator: "/").last ?? "") ?? 0
            let chunks = stride(from: 0, to: count, by: 1000).map {
                [UInt8](repeating: 0x61, count: min(1000, count - $0))
            }
            return HTTPResponse(statusCode: .ok, body: HTTPBodySequence(from: ScriptedBody(chunks: chunks)))
        }
    }

    /// `Content-Length: <n>` for a path ending in `/<n>`, sent as it is: FlyingFox writes a
    /// `Content-Length` of its own only when the response has none.
    private static func declaredLength(lastComponentOf path: String) -> HTTPHeaders {
        HTTPHeaders([HTTPHeader("Content-Length"): String(path.split(separator: "/").last ?? "0")])
    }

    private func hold() async {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.held += 1
            var ready: [CheckedContinuation<Void, Never>] = []
            state.heldWaiters.removeAll { waiter in
                guard state.held >= waiter.count else { return false }
                ready.append(waiter.continuation)
                return true
            }
            return ready
        }
        for waiter in ready { waiter.resume() }
        await release.wait()
    }
}

/// A response body sent chunk by chunk: it can open a latch after the first chunk and wait
/// for another before the rest, and it can break the connection once its chunks are out.
private struct ScriptedBody: AsyncBufferedSequence, Sendable {
    typealias Element = UInt8

    var chunks: [[UInt8]]
    var between: (sent: Latch, resume: Latch)? = nil
    var failAtEnd = false

    func makeAsyncIterator() -> Iterator { Iterator(body: self) }

    struct Iterator: AsyncBufferedIteratorProtocol {
        var body: ScriptedBody
        var index = 0

        mutating func next() async throws -> UInt8? {
            try await nextBuffer(suggested: 1)?.first
        }

        mutating func nextBuffer(suggested count: Int) async throws -> [UInt8]? {
            if index == 1, let between = body.between {
                between.sent.open()
                await between.resume.wait()
            }
            guard index < body.chunks.count else {
                if body.failAtEnd { throw ConnectionDropped() }
                return nil
            }
            defer { index += 1 }
            return body.chunks[index]
        }
    }
}

private struct ConnectionDropped: Error {}
