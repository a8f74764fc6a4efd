/// Whether an error a ``GateTransport`` threw is worth another attempt.
///
/// ```swift
/// import HTTPTypes
///
/// struct MyTransport: GateTransport {
///     func classify(_ error: any Error) -> TransportFailure {
///         (error as? MyClientError)?.isTimeout == true ? .transient : .permanent
///     }
///     func send(_ request: HTTPRequest, body: GateRequestBody?) async throws -> GateTransportResponse {
///         try await myClient.send(request, body: body)
///     }
/// }
/// ```
///
/// A ``RequestGate`` retries a transient failure (within the request's
/// ``RequestRetryPolicy``) and ends the request at once on a permanent one, with
/// ``GateError/Code/transport`` and the error as ``GateError/underlyingError``.
public struct TransportFailure: Hashable, Sendable, CustomStringConvertible {
    private enum Kind: Hashable, Sendable {
        case transient, permanent
    }

    private let kind: Kind

    /// Another attempt may succeed: the request timed out, the connection was lost or reset,
    /// the host was unreachable for now, the device was offline.
    public static let transient = TransportFailure(kind: .transient)
    /// Another attempt would fail the same way: a malformed URL, an unsupported scheme, a
    /// certificate the client rejects, a cancelled request.
    public static let permanent = TransportFailure(kind: .permanent)

    public var description: String { "\(kind)" }
}
