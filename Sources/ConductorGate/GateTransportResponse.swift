public import Foundation
public import HTTPTypes

/// What a ``GateTransport`` hands back for one request: the response head and body, and where
/// the response came from, when the transport can tell.
///
/// ```swift
/// struct Canned: GateTransport {
///     func send(_ request: HTTPRequest, body: GateRequestBody?) async throws -> GateTransportResponse {
///         GateTransportResponse(response: HTTPResponse(status: .ok), body: Array("hello".utf8))
///     }
/// }
/// ```
///
/// A transport that follows redirects and can see them sets ``url`` and ``redirects``; one that
/// cannot leaves them `nil`, which says "not known" — not "no redirect" (that is `[]`).
public struct GateTransportResponse: Sendable, Hashable {
    /// The response head.
    public var response: HTTPResponse
    /// The response body.
    public var body: [UInt8]
    /// The URL that answered: the request's, or the last redirect's target. `nil` when the
    /// transport cannot tell.
    public var url: URL?
    /// The redirects followed on the way, oldest first: `[]` when none was; `nil` when the
    /// transport cannot tell.
    public var redirects: [GateRedirect]?

    public init(response: HTTPResponse, body: [UInt8], url: URL? = nil, redirects: [GateRedirect]? = nil) {
        self.response = response
        self.body = body
        self.url = url
        self.redirects = redirects
    }
}
