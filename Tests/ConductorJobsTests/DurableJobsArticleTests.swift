import ConductorCore
import ConductorGate
import ConductorJobs
import ConductorURLSession
import Foundation
import HTTPTypes
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The "Durable jobs" article's example, as the article writes it, against the order server on
/// loopback (for `shop.example`) and a network monitor the test turns on: the order waits for the
/// network, is placed once, with the job's key, and its record says so.
@Suite struct DurableJobsArticleTests {
    struct PlaceOrder: JobKind {
        static let name = "place-order"
        struct Payload: Codable, Sendable {
            var orderID: String
            var items: [String]
        }
    }

    /// The article's network monitor, which the test switches on.
    final class NetworkStatus: Sendable {
        private let state = Lock<(up: Bool, actions: [@Sendable () -> Void])>((false, []))
        var isReachable: Bool { state.withLock { $0.up } }
        func onChange(_ action: @escaping @Sendable () -> Void) { state.withLock { $0.actions.append(action) } }
        func comeBack() {
            let actions = state.withLock { state in
                state.up = true
                return state.actions
            }
            for action in actions { action() }
        }
    }

    @Test func anOrderPlacedOfflineIsPlacedOnceWhenTheNetworkComesBack() async throws {
        let server = try await OrderServer.start()
        let file = TemporaryFile("article")
        let network = NetworkStatus()
        let session = URLSession(configuration: .ephemeral)
        let authority = "127.0.0.1:\(server.port)"  // the article's "shop.example"

        // The article's example.
        let gate = try RequestGate<String>(
            transport: URLSessionTransport(session: session),
            authorize: { request, token in request.headerFields[.authorization] = "Bearer \(token)" },
            refresh: { _ in "token" })
        let queue = try JobQueue(path: file.path)
        queue.register(PlaceOrder.self) { order, context in
            var request = HTTPRequest(method: .post, scheme: "http", authority: authority, path: "/orders")
            request.headerFields[.idempotencyKey] = context.idempotencyKey
            // The order server reads the order's number as the body.
            _ = try await gate.send(request, body: .bytes(Array(order.orderID.dropFirst(2).utf8)))
        }
        queue.register(constraint: JobConstraint(name: "network") { network.isReachable })
        let recovery = try await queue.start()
        #expect(recovery.requeued.isEmpty)

        let order = PlaceOrder.Payload(orderID: "A-1042", items: ["mug", "tea"])
        let id = try await queue.enqueue(
            PlaceOrder.self, order,
            options: JobOptions(
                unique: .keepExisting("order-A-1042"),
                tags: ["orders"],
                retry: .attempts(5, backoff: .seconds(2)),
                constraints: ["network"]))
        // A second tap adds nothing.
        let again = try await queue.enqueue(
            PlaceOrder.self, order, options: JobOptions(unique: .keepExisting("order-A-1042")))
        #expect(again == id)
        network.onChange { queue.constraintsChanged() }

        // Offline: the order is on disk, pending, and nothing was sent.
        #expect(try queue.job(id)?.state == .pending)
        #expect(server.received.isEmpty)
        network.comeBack()

        let record = try await queue.ended(id)
        #expect(record.state == .succeeded)
        #expect(server.received.map(\.key) == [record.idempotencyKey])
        #expect(server.effects[1042]?.count == 1)
        await queue.shutdown()
        session.finishTasksAndInvalidate()
        await server.stop()
    }
}
