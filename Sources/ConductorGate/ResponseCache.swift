public import HTTPTypes

/// Where a ``RequestGate`` keeps successful responses and looks for one when the network fails
/// (the "use cache" state).
///
/// ```swift
/// actor MemoryCache: ResponseCache {
///     var entries: [String: GateResponse] = [:]
///     func response(for request: HTTPRequest) -> GateResponse? { entries[request.path ?? ""] }
///     func store(_ response: GateResponse, for request: HTTPRequest) { entries[request.path ?? ""] = response }
/// }
/// ```
///
/// The gate calls ``store(_:for:)`` after every success and ``response(for:)`` once, when a
/// request has finally failed for a network reason (transport error, retries exhausted,
/// timeout) — never after a rejection, a failed refresh or a cancellation.
public protocol ResponseCache: Sendable {
    /// The stored response for `request`, if any.
    func response(for request: HTTPRequest) async -> GateResponse?
    /// Stores a successful response.
    func store(_ response: GateResponse, for request: HTTPRequest) async
}
