import ConductorCore
import FlyingFox
import FlyingSocks
import Foundation

/// A shop backend on loopback for the crash tests: `POST /orders` with an `Idempotency-Key`
/// header and the order's number as its body. The server keeps every request it received
/// (key and order) and performs an order's effect once per key — its own de-duplication by
/// key, which is the half of "exactly once in effect" the server owns. A repeated key gets the
/// first answer again.
final class OrderServer: Sendable {
    struct Received: Hashable, Sendable {
        let order: Int
        let key: String
    }

    struct Effect: Hashable, Sendable {
        let order: Int
        let key: String
        /// Where the effect falls among all effects: chained orders must take their turn.
        let sequence: Int
    }

    private struct State {
        var received: [Received] = []
        var effects: [String: Effect] = [:]
    }

    private let state = Lock(State())
    private let server: HTTPServer
    private let runTask: Task<Void, Never>
    let port: UInt16

    static func start() async throws -> OrderServer {
        let server = HTTPServer(address: try .inet(ip4: "127.0.0.1", port: 0), logger: .disabled)
        let runTask = Task { _ = try? await server.run() }
        // Generous: under the thread sanitizer on 2 busy cores, starting can take seconds. A guard, not a timing test.
        try await server.waitUntilListening(timeout: 120)
        guard case .ip4(_, port: let port)? = await server.listeningAddress else {
            throw URLError(.cannotConnectToHost)
        }
        let orders = OrderServer(server: server, runTask: runTask, port: port)
        await orders.installRoutes()
        return orders
    }

    private init(server: HTTPServer, runTask: Task<Void, Never>, port: UInt16) {
        self.server = server
        self.runTask = runTask
        self.port = port
    }

    func stop() async {
        await server.stop()
        runTask.cancel()
    }

    /// Every request received, in order of arrival, repeats included.
    var received: [Received] { state.withLock { $0.received } }

    /// The effects performed, one per key, by order number.
    var effects: [Int: [Effect]] {
        state.withLock { Dictionary(grouping: $0.effects.values, by: \.order) }
    }

    private func installRoutes() async {
        await server.appendRoute("POST /orders") { [weak self] request in
            guard let self else { return HTTPResponse(statusCode: .serviceUnavailable) }
            guard let key = request.headers[HTTPHeader("Idempotency-Key")],
                let order = Int(String(decoding: try await request.bodyData, as: UTF8.self))
            else { return HTTPResponse(statusCode: .badRequest) }
            let effect = self.state.withLock { state in
                state.received.append(Received(order: order, key: key))
                if let effect = state.effects[key] { return effect }
                let effect = Effect(order: order, key: key, sequence: state.effects.count)
                state.effects[key] = effect
                return effect
            }
            return HTTPResponse(statusCode: .ok, body: Data("placed \(effect.order)".utf8))
        }
    }
}
