import FlyingFox
import FlyingSocks
import Foundation

/// The shop's backend, embedded: two API mirrors on 127.0.0.1 (free ports) sharing one
/// account database. Latencies are seeded; tokens expire on a schedule; the scenario decides
/// what fails.
///
/// Routes: `GET /ping`, `GET /version` (no token), `POST /login` (the first token),
/// `POST /token` (a refresh), and a `GET` per endpoint of ``PageCatalog`` plus `/config`,
/// which need `Authorization: Bearer <token>` and answer 401 once the token has expired.
/// `POST /orders` (no token) places one order per `Idempotency-Key` (``OrderBook``).
/// While ``setMirrorsDown(_:)`` holds them down, both mirrors answer every request 503.
final class DemoServer: Sendable {
    /// What the server does, decided by the scenario.
    struct Behaviour: Sendable {
        /// How many data requests each issued token is good for; past the end, tokens never expire.
        var tokenLifetimes: [Int] = []
        var refusesRefresh = false
        var latencyFactor = 1.0
        /// How many times an endpoint answers 503 before it recovers.
        var overloaded: [String: Int] = [:]

        init(_ scenario: Scenario) {
            switch scenario {
            case .normal:
                overloaded = ["/recommendations": 1]
            case .tokenExpiry:
                // Login, config, the first screen's six calls, then one shipping call:
                // the token runs out while the shipping stage is on the wire.
                tokenLifetimes = [8]
                overloaded = ["/recommendations": 1]
            case .refreshFails:
                tokenLifetimes = [8]
                refusesRefresh = true
            case .slowNetwork:
                latencyFactor = 3
                overloaded = ["/recommendations": 1, "/shipping/logistics": 1, "/comments": 2]
            case .offlineWithCache:
                break
            }
        }
    }

    /// What the server saw, for the summary and the tests.
    struct Counters: Sendable {
        var logins = 0
        var refreshRequests = 0
        var dataRequests = 0
        var rejectedTokens = 0
        var overloadedAnswers = 0
    }

    private struct State {
        var counters = Counters()
        var issued = 0
        var validToken: String?
        var remainingUses: Int?
        var hits: [String: Int] = [:]
        var overloaded: [String: Int]
    }

    private let behaviour: Behaviour
    private let seed: UInt64
    private let latencyScale: Double
    private let state: Guarded<State>
    private let book = Watched(OrderBook())
    private let mirrors: [(name: String, server: HTTPServer, task: Task<Void, Never>)]
    /// Each mirror's name and authority (`127.0.0.1:port`), in order.
    let authorities: [(name: String, authority: String)]

    /// Starts both mirrors and waits until they listen.
    static func start(_ options: DemoOptions = DemoOptions()) async throws -> DemoServer {
        var mirrors: [(String, HTTPServer, Task<Void, Never>)] = []
        var authorities: [(String, String)] = []
        for name in ["mirror-a", "mirror-b"] {
            let server = HTTPServer(address: try .inet(ip4: "127.0.0.1", port: 0), logger: .disabled)
            let task = Task { _ = try? await server.run() }
            try await server.waitUntilListening()
            guard case .ip4(_, port: let port)? = await server.listeningAddress else {
                throw URLError(.cannotConnectToHost)
            }
            mirrors.append((name, server, task))
            authorities.append((name, "127.0.0.1:\(port)"))
        }
        let demoServer = DemoServer(options: options, mirrors: mirrors, authorities: authorities)
        for (name, server, _) in mirrors {
            await demoServer.installRoutes(on: server, mirror: name)
        }
        return demoServer
    }

    private init(
        options: DemoOptions,
        mirrors: [(String, HTTPServer, Task<Void, Never>)],
        authorities: [(String, String)]
    ) {
        self.behaviour = Behaviour(options.scenario)
        self.seed = options.seed
        self.latencyScale = options.latencyScale
        self.state = Guarded(State(overloaded: behaviour.overloaded))
        self.mirrors = mirrors.map { (name: $0.0, server: $0.1, task: $0.2) }
        self.authorities = authorities.map { (name: $0.0, authority: $0.1) }
    }

    /// Both mirrors stop listening: the network is gone.
    func stop() async {
        for mirror in mirrors {
            await mirror.server.stop()
            mirror.task.cancel()
        }
    }

    var counters: Counters { state.withLock { $0.counters } }

    /// Takes both mirrors down (`true`): they keep listening, but answer every request 503 —
    /// an outage the app cannot tell from its own network failing — until called with `false`.
    func setMirrorsDown(_ down: Bool) {
        book.update { $0.mirrorsDown = down }
    }

    /// What the mirrors saw of `POST /orders` so far.
    var orders: OrderCounts { book.value.counts }

    /// Waits until the order counts satisfy `condition`, for at most `limit` on `clock`;
    /// throws a ``DemoFailure`` naming `what` after that.
    func orders(
        where condition: @escaping @Sendable (OrderCounts) -> Bool, within limit: Duration,
        clock: some Clock<Duration> = ContinuousClock(), waitingFor what: String
    ) async throws -> OrderCounts {
        try await book.first(where: { condition($0.counts) }, within: limit, clock: clock, waitingFor: what).counts
    }

    // MARK: - Routes

    private func installRoutes(on server: HTTPServer, mirror: String) async {
        // First, so it sees every request: while the mirrors are down it answers them all
        // (`/orders` answers for itself, to count the refusal); otherwise it passes them on.
        await server.appendRoute("/*") { [self] request in
            guard book.value.mirrorsDown, request.path != "/orders" else { throw HTTPUnhandledError() }
            return HTTPResponse(statusCode: .serviceUnavailable, body: Data("\(mirror) is down".utf8))
        }
        await server.appendRoute("POST /orders") { [self] request in
            placeOrder(request, mirror: mirror)
        }
        await server.appendRoute("GET /ping") { [self] _ in
            // The mirrors differ in distance; the scenario's random seed decides by how much.
            let base = mirror == "mirror-a" ? 45 : 25
            try await pause(milliseconds: base, name: "ping \(mirror)")
            return HTTPResponse(statusCode: .ok, body: Data(mirror.utf8))
        }
        await server.appendRoute("GET /version") { [self] _ in
            try await pause(milliseconds: 70, name: "/version")
            return HTTPResponse(statusCode: .ok, body: Data(#"{"latest":"4.2.0","required":"4.0.0"}"#.utf8))
        }
        await server.appendRoute("POST /login") { [self] _ in
            try await pause(milliseconds: 80, name: "/login")
            let token = state.withLock { state in
                state.counters.logins += 1
                return issueToken(&state)
            }
            return HTTPResponse(statusCode: .ok, body: Data(token.utf8))
        }
        await server.appendRoute("POST /token") { [self] _ in
            try await pause(milliseconds: 150, name: "/token")
            let token = state.withLock { state -> String? in
                state.counters.refreshRequests += 1
                return behaviour.refusesRefresh ? nil : issueToken(&state)
            }
            guard let token else {
                return HTTPResponse(statusCode: .forbidden, body: Data("login expired".utf8))
            }
            return HTTPResponse(statusCode: .ok, body: Data(token.utf8))
        }
        for (path, latency) in PageCatalog.dataEndpoints {
            await server.appendRoute(HTTPRoute(methods: [.GET], path: path)) { [self] request in
                try await serveData(request, path: path, latency: latency)
            }
        }
    }

    private func placeOrder(_ request: HTTPRequest, mirror: String) -> HTTPResponse {
        let key = request.headers[HTTPHeader("Idempotency-Key")]
        switch book.update({ $0.take(key: key) }) {
        case .refused:
            return HTTPResponse(statusCode: .serviceUnavailable, body: Data("\(mirror) is down".utf8))
        case .missingKey:
            return HTTPResponse(statusCode: .badRequest, body: Data("an order needs an Idempotency-Key header".utf8))
        case .order(let number, let repeated):
            // A repeat gets the first answer, marked as a replay, as payment APIs do.
            var headers: HTTPHeaders = [HTTPHeader("Content-Type"): "application/json"]
            if repeated { headers[HTTPHeader("Idempotent-Replayed")] = "true" }
            return HTTPResponse(
                statusCode: .created, headers: headers, body: Data(#"{"order":\#(number)}"#.utf8))
        }
    }

    private func serveData(_ request: HTTPRequest, path: String, latency: Int) async throws -> HTTPResponse {
        let token = request.headers[HTTPHeader("Authorization")].map { String($0.dropFirst("Bearer ".count)) }
        enum Verdict {
            case serve(Int)
            case rejected, overloaded
        }
        let verdict = state.withLock { state -> Verdict in
            state.counters.dataRequests += 1
            guard let token, token == state.validToken else {
                state.counters.rejectedTokens += 1
                return .rejected
            }
            if let remaining = state.remainingUses {
                if remaining <= 1 { state.validToken = nil }
                state.remainingUses = remaining - 1
            }
            if let busy = state.overloaded[path], busy > 0 {
                state.overloaded[path] = busy - 1
                state.counters.overloadedAnswers += 1
                return .overloaded
            }
            state.hits[path, default: 0] += 1
            return .serve(state.hits[path]!)
        }
        switch verdict {
        case .rejected:
            try await pause(milliseconds: 20, name: "401 \(path)")
            return HTTPResponse(statusCode: .unauthorized, body: Data("token expired".utf8))
        case .overloaded:
            try await pause(milliseconds: 40, name: "503 \(path)")
            return HTTPResponse(statusCode: .serviceUnavailable)
        case .serve(let occurrence):
            try await pause(milliseconds: latency, name: path, occurrence: occurrence)
            let body = #"{"endpoint":"\#(path)","token":"\#(token ?? "")"}"#
            return HTTPResponse(
                statusCode: .ok, headers: [HTTPHeader("Content-Type"): "application/json"], body: Data(body.utf8))
        }
    }

    /// Issues the next token and starts its lifetime. Called under the state's lock.
    private func issueToken(_ state: inout State) -> String {
        state.issued += 1
        let token = "t\(state.issued)"
        state.validToken = token
        let index = state.issued - 1
        state.remainingUses = index < behaviour.tokenLifetimes.count ? behaviour.tokenLifetimes[index] : nil
        return token
    }

    /// Waits the endpoint's latency: the base, ±30 % seeded jitter, times the scenario's factor
    /// and the demo's scale. The server is real, so it really waits.
    private func pause(milliseconds: Int, name: String, occurrence: Int = 1) async throws {
        var random = SeededRandom.derived(seed: seed, name: name, occurrence: occurrence)
        let jitter = Double.random(in: 0.7...1.3, using: &random)
        let scaled = Double(milliseconds) * jitter * behaviour.latencyFactor * latencyScale
        try await Task.sleep(for: .microseconds(Int(scaled * 1000)))
    }
}
