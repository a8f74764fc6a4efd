public import Conductor
import ConductorJobs
import ConductorURLSession
public import Foundation
import HTTPTypes

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The shop app of the offline-order story, as the process the story kills: it keeps its
/// orders in a ``JobQueue`` file and places each with a `POST /orders` through a
/// ``RequestGate``, carrying the job's idempotency key, trying each mirror in turn.
///
/// ```swift
/// let app = OrderApp(database: "/tmp/jobs.sqlite", mirrors: [URL(string: "http://127.0.0.1:8080")!])
/// let placed = try await app.run(placing: "A-1042") { line in print(line) }
/// ```
///
/// Run again on the same file with no order, it finds the orders a killed run left and places
/// them. The job retries, not the gate: a job's retry survives the process, a gate's does not.
public struct OrderApp: Sendable {
    /// What the app says when `enqueue` has returned: from then on the order is on disk.
    public static let committedLine = "committed order"
    /// How the app ends the line of an attempt that failed.
    public static let retryLine = "the job will try again"

    /// The queue's file.
    public var database: String
    /// The shop's mirrors, tried in this order on every attempt.
    public var mirrors: [URL]
    /// Attempts and waits per order: up to 60, 100 ms apart growing to 1 s, counted across
    /// deliveries, so an outage of up to a minute is outlasted.
    public var retry = RetryPolicy.attempts(60, backoff: .milliseconds(100), maxBackoff: .seconds(1))

    public init(database: String, mirrors: [URL]) {
        self.database = database
        self.mirrors = mirrors
    }

    /// Opens the queue, adds `order` to it if one is given (once: a second run with the same
    /// order adds nothing while the first is not ended), starts it — which runs again the jobs a
    /// killed process left running — and waits until every order has ended. Returns whether
    /// all of them were placed.
    public func run(placing order: String?, say: @escaping @Sendable (String) -> Void) async throws -> Bool {
        let session = URLSession(configuration: .ephemeral)
        defer { session.finishTasksAndInvalidate() }
        let gate = try RequestGate<String>(
            transport: DemoTransport(base: URLSessionTransport(session: session)),
            // One send per attempt: the job's retry policy decides when to try again.
            configuration: GateConfiguration(retry: .never, requestTimeout: .seconds(5)),
            authorize: { _, _ in },
            // Orders are sent anonymously: the demo's shop takes them without a token.
            refresh: { _ in throw DemoFailure("the order endpoint needs no sign-in") })
        defer { gate.shutdown() }

        let queue = try JobQueue(path: database)
        let mirrors = self.mirrors
        queue.register(PlaceOrder.self) { order, context in
            try await Self.place(order, context: context, mirrors: mirrors, gate: gate, say: say)
        }
        if let order {
            let id = try await queue.enqueue(
                PlaceOrder.self, PlaceOrder.Payload(orderID: order, items: ["mug", "tea"]),
                options: JobOptions(unique: .keepExisting("order-\(order)"), tags: ["orders"], retry: retry))
            let key = try queue.job(id)?.idempotencyKey ?? "?"
            say("\(Self.committedLine) \(order) as job \(id), idempotency key \(key.prefix(8))…")
        }
        let recovery = try await queue.start()
        for id in recovery.requeued {
            say("found job \(id) still running: the process that ran it died; running it again")
        }
        var allPlaced = true
        for pending in try queue.jobs(tag: "orders") where !pending.state.isEnded {
            let record = try await queue.ended(pending.id)
            allPlaced = allPlaced && record.state == .succeeded
            say(Self.describe(record))
        }
        await queue.shutdown()
        return allPlaced
    }

    /// One attempt: each mirror in turn until one takes the order.
    static func place(
        _ order: PlaceOrder.Payload, context: JobContext, mirrors: [URL], gate: RequestGate<String>,
        say: @Sendable (String) -> Void
    ) async throws {
        let attempt = "attempt \(context.attempt), delivery \(context.delivery)"
        let body = try JSONEncoder().encode(order)
        var failures: [String] = []
        for mirror in mirrors {
            let authority = "\(mirror.host ?? "localhost")\(mirror.port.map { ":\($0)" } ?? "")"
            var request = HTTPRequest(
                method: .post, scheme: mirror.scheme ?? "http", authority: authority, path: "/orders")
            request.headerFields[.idempotencyKey] = context.idempotencyKey
            request.headerFields[.contentType] = "application/json"
            do {
                let reply = try await gate.send(request, body: .bytes(Array(body)), authorization: .anonymous)
                let number = (try? JSONDecoder().decode(Placed.self, from: Data(reply.body)))?.order
                let replayed = reply.response.headerFields[Self.replayed] == "true"
                say(
                    "\(attempt): \(authority) placed order #\(number.map(String.init) ?? "?")"
                        + (replayed ? " (a repeat: the server answered with the order this key placed)" : ""))
                return
            } catch {
                // The status, or the transport's own words ("could not connect to …").
                failures.append(
                    error.status.map { "\(authority) answered \($0)" }
                        ?? ErrorText.short(error.underlyingError ?? error, authority: authority))
            }
        }
        say("\(attempt): \(failures.joined(separator: ", ")) — \(retryLine)")
        throw DemoFailure("order \(order.orderID) not placed: \(failures.joined(separator: ", "))")
    }

    static func describe(_ record: JobRecord) -> String {
        let tries = "\(record.attempts) attempt\(record.attempts == 1 ? "" : "s")"
        let runs = "\(record.deliveries) deliver\(record.deliveries == 1 ? "y" : "ies")"
        switch record.state {
        case .succeeded: return "job \(record.id) succeeded after \(tries) in \(runs)"
        default:
            return "job \(record.id) \(record.state) after \(tries) in \(runs): \(record.lastError?.message ?? "")"
        }
    }

    /// The header a repeated key's answer carries.
    static let replayed = HTTPField.Name("Idempotent-Replayed")!

    /// The server's answer to an order.
    struct Placed: Decodable {
        var order: Int
    }
}

/// The job that places an order; the queue keeps its payload as JSON.
struct PlaceOrder: JobKind {
    static let name = "place-order"
    struct Payload: Codable, Sendable {
        var orderID: String
        var items: [String]
    }
}
