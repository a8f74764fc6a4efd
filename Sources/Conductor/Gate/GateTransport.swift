public import HTTPTypes

/// What actually sends a request for a ``RequestGate``: URLSession, an HTTP client, or an
/// in-memory fake in tests.
///
/// ```swift
/// struct Canned: GateTransport {
///     func send(_ request: HTTPRequest, body: RequestBody?) async throws -> (HTTPResponse, [UInt8]) {
///         (HTTPResponse(status: .ok), Array("hello".utf8))
///     }
/// }
/// ```
///
/// `ConductorURLSession` ships `URLSessionTransport`. A transport should honour task
/// cancellation; it is called outside every gate lock and never sees a request twice
/// unless the gate decided to send it again.
public protocol GateTransport: Sendable {
    /// Sends one request and returns the response head and body.
    func send(_ request: HTTPRequest, body: RequestBody?) async throws -> (HTTPResponse, [UInt8])
}
