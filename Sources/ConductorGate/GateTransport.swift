public import HTTPTypes

/// What actually sends a request for a ``RequestGate``: URLSession, an HTTP client, or an
/// in-memory fake in tests.
///
/// ```swift
/// struct Canned: GateTransport {
///     func send(_ request: HTTPRequest, body: GateRequestBody?) async throws -> GateTransportResponse {
///         GateTransportResponse(response: HTTPResponse(status: .ok), body: Array("hello".utf8))
///     }
/// }
/// ```
///
/// `ConductorURLSession` ships `URLSessionTransport` (apps), and `ConductorAsyncHTTPClient`
/// ships `AsyncHTTPClientTransport` (servers; it cancels a request on Linux too). A transport
/// should honour task
/// cancellation; it is called outside every gate lock and never sees a request twice
/// unless the gate decided to send it again.
///
/// A transport also says which of its errors are worth another attempt (``classify(_:)``);
/// by default every error but a `CancellationError` is ``TransportFailure/transient``.
public protocol GateTransport: Sendable {
    /// Sends one request and returns the response head and body, and — when the transport can
    /// tell — the URL that answered and the redirects that led there
    /// (``GateTransportResponse/url``, ``GateTransportResponse/redirects``).
    ///
    /// The request always has a scheme and an authority: the gate resolves one that names only
    /// a path against ``GateConfiguration/baseURL`` before it gets here.
    func send(_ request: HTTPRequest, body: GateRequestBody?) async throws -> GateTransportResponse

    /// Whether `error`, thrown by ``send(_:body:)``, is worth another attempt. Called outside
    /// every gate lock.
    func classify(_ error: any Error) -> TransportFailure
}

extension GateTransport {
    /// Every error is ``TransportFailure/transient``, except a `CancellationError`.
    public func classify(_ error: any Error) -> TransportFailure {
        error is CancellationError ? .permanent : .transient
    }
}
