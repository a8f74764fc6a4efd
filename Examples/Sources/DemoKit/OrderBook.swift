/// What the shop's backend saw of `POST /orders`, over both mirrors.
public struct OrderCounts: Sendable, Equatable {
    /// Every `POST /orders` that reached a mirror.
    public var requests = 0
    /// Answered 503 because the mirrors were down.
    public var refused = 0
    /// Answered 400: no `Idempotency-Key`.
    public var rejected = 0
    /// Answered with an order: a new one, or the one an earlier request with the same key placed.
    public var accepted = 0
    /// Orders placed: one per idempotency key, however many requests carried it.
    public var placed = 0
    /// Every idempotency key that reached a mirror, refused or not.
    public var keys: Set<String> = []
}

/// The shop's orders, which both mirrors share: one order per idempotency key. A pure value —
/// each request is one ``take(key:)``, which says what to answer — so the de-duplication is
/// tested without a server.
struct OrderBook: Sendable {
    enum Answer: Equatable {
        /// 503: the mirrors are down.
        case refused
        /// 400: the request carries no `Idempotency-Key`.
        case missingKey
        /// The order placed under the request's key; `repeated` if an earlier request placed it.
        case order(number: Int, repeated: Bool)
    }

    /// While `true`, every order is refused, before its key is read. Kept here, with the
    /// counts, so a refusal and its count are one step.
    var mirrorsDown = false
    private(set) var counts = OrderCounts()
    private var numbers: [String: Int] = [:]

    mutating func take(key: String?) -> Answer {
        counts.requests += 1
        if let key, !key.isEmpty { counts.keys.insert(key) }
        if mirrorsDown {
            counts.refused += 1
            return .refused
        }
        guard let key, !key.isEmpty else {
            counts.rejected += 1
            return .missingKey
        }
        counts.accepted += 1
        if let number = numbers[key] { return .order(number: number, repeated: true) }
        counts.placed += 1
        numbers[key] = counts.placed
        return .order(number: counts.placed, repeated: false)
    }
}
