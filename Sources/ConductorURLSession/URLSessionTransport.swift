public import Conductor
public import HTTPTypes
import HTTPTypesFoundation

#if canImport(FoundationNetworking)
    import Foundation
    public import FoundationNetworking
#else
    public import Foundation
#endif

/// Sends a ``RequestGate``'s requests with `URLSession` (FoundationNetworking on Linux).
///
/// ```swift
/// let gate = RequestGate<String>(
///     transport: URLSessionTransport(),
///     authorize: { request, token in request.headerFields[.authorization] = "Bearer \(token)" },
///     refresh: { _ in try await auth.fetchToken() }
/// )
/// ```
///
/// Cancelling the sending task cancels the `URLSession` task.
public struct URLSessionTransport: GateTransport {
    private let session: URLSession

    /// Uses `session`, the shared session by default.
    public init(session: URLSession = .shared) {
        self.session = session
    }

    public func send(_ request: HTTPRequest, body: RequestBody?) async throws -> (HTTPResponse, [UInt8]) {
        let (data, response): (Data, HTTPResponse)
        if let body {
            (data, response) = try await session.upload(for: request, from: Data(await body.collect()))
        } else {
            (data, response) = try await session.data(for: request)
        }
        return (response, Array(data))
    }
}
