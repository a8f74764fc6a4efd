import ConductorCore
import ConductorGate
import ConductorTestKit
import Foundation
import HTTPTypes
import Testing

@testable import ConductorJobs

/// Exactly once in effect: a job that sends through the request gate sends its idempotency key
/// as `Idempotency-Key`, and a server that de-duplicates by it applies the effect once however
/// many times the job's handler runs — a retry after a lost response, or a re-run after the
/// process died between the send and the commit of the job's end.
struct JobIdempotencyTests {
    /// A shop server in memory: applies an order once per key; can lose the response of the
    /// first request (the effect is applied, the client sees a dropped connection).
    final class Shop: GateTransport {
        struct ConnectionDropped: Error {}
        private let state = Lock<(requests: [String], applied: Set<String>, dropFirst: Bool)>(([], [], false))

        init(dropFirstResponse: Bool) { state.withLock { $0.dropFirst = dropFirstResponse } }

        func send(_ request: HTTPRequest, body: GateRequestBody?) async throws -> GateTransportResponse {
            let key = request.headerFields[HTTPField.Name("Idempotency-Key")!] ?? ""
            let drop = state.withLock { state in
                state.requests.append(key)
                state.applied.insert(key)
                defer { state.dropFirst = false }
                return state.dropFirst
            }
            if drop { throw ConnectionDropped() }
            return GateTransportResponse(response: HTTPResponse(status: .ok), body: [])
        }

        var requests: [String] { state.withLock { $0.requests } }
        var effects: Int { state.withLock { $0.applied.count } }
    }

    struct PlaceOrder: JobKind {
        static let name = "place-order"
        struct Payload: Codable, Sendable { var orderID: String }
    }

    let harness = JobHarness()

    private func register(_ queue: JobQueue, _ shop: Shop) throws {
        let gate = try RequestGate<String>(transport: shop, authorize: { _, _ in }, refresh: { _ in "unused" })
        queue.register(PlaceOrder.self) { order, context in
            var request = HTTPRequest(method: .post, scheme: "https", authority: "shop.test", path: "/orders")
            request.headerFields[HTTPField.Name("Idempotency-Key")!] = context.idempotencyKey
            _ = try await gate.send(request, body: .bytes(Array(order.orderID.utf8)), authorization: .anonymous)
        }
    }

    @Test func aRetryAfterALostResponseSendsTheSameKeyAndTheEffectHappensOnce() async throws {
        let shop = Shop(dropFirstResponse: true)
        let queue = try harness.queue()
        try register(queue, shop)
        try await queue.start()
        let id = try await queue.enqueue(
            PlaceOrder.self, .init(orderID: "42"), options: JobOptions(retry: .attempts(3, backoff: .zero)))
        let record = try await queue.ended(id)
        #expect(record.state == .succeeded)  // retried by the gate or by the job: the same key either way
        #expect(shop.requests == [record.idempotencyKey, record.idempotencyKey])
        #expect(shop.effects == 1)
        await queue.shutdown()
    }

    @Test func aReRunAfterADeathBetweenTheSendAndTheCommitAppliesTheEffectOnce() async throws {
        let shop = Shop(dropFirstResponse: false)
        let first = try harness.queue()
        let id = try await first.enqueue(PlaceOrder.self, .init(orderID: "42"))
        // What a process that died right after its handler's send leaves: the job claimed and
        // running in the file, and the server holding the request with its key.
        _ = try await first.store.write { db in
            try JobStore.claim(limit: 1, kinds: [PlaceOrder.name], satisfied: [], now: JobHarness.origin, in: db)
        }
        let key = try #require(try first.job(id)).idempotencyKey
        var sent = HTTPRequest(method: .post, scheme: "https", authority: "shop.test", path: "/orders")
        sent.headerFields[HTTPField.Name("Idempotency-Key")!] = key
        _ = try await shop.send(sent, body: nil)

        let second = try harness.queue()
        try register(second, shop)
        #expect(try await second.start().requeued == [id])
        let record = try await second.ended(id)
        #expect(record.state == .succeeded && record.deliveries == 2)
        #expect(shop.requests == [record.idempotencyKey, record.idempotencyKey])
        #expect(shop.effects == 1)
        await second.shutdown()
    }
}
