public import HTTPTypes

extension HTTPField.Name {
    /// `Idempotency-Key`: a request that carries one says that sending it again does no harm,
    /// because the server performs each key once and answers a repeat with the first answer.
    /// The gate retries such a request whatever its method (``RequestRetryPolicy``), and a
    /// durable job sends its own key, the same on every delivery.
    ///
    /// ```swift
    /// var order = HTTPRequest(method: .post, scheme: "https", authority: "shop.example", path: "/orders")
    /// order.headerFields[.idempotencyKey] = "6f1c2a9e-orders-1042"
    /// ```
    public static let idempotencyKey = HTTPField.Name("Idempotency-Key")!
}
