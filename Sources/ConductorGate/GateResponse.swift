public import Foundation
public import HTTPTypes

/// What a ``RequestGate`` hands back: the response, its body, and where it came from.
///
/// ```swift
/// let reply = try await gate.send(request)
/// if reply.isFromCache { showOfflineBanner() }
/// if let moved = reply.redirects?.first(where: { $0.status == .movedPermanently }) { forget(moved.url) }
/// render(reply.body)
/// ```
///
/// ``url`` and ``redirects`` are what the transport reported (see ``GateTransportResponse``):
/// `nil` when it cannot tell. A response from the cache reports those of the response when it
/// was stored.
public struct GateResponse: Sendable, Hashable {
    /// The response head.
    public var response: HTTPResponse
    /// The response body.
    public var body: [UInt8]
    /// `true` when the network failed and this came from the gate's ``ResponseCache``.
    public var isFromCache: Bool
    /// The URL that answered, after any redirects; `nil` when the transport cannot tell.
    public var url: URL?
    /// The redirects that led to ``url``, oldest first: `[]` when there was none; `nil` when the
    /// transport cannot tell.
    public var redirects: [GateRedirect]?

    public init(
        response: HTTPResponse, body: [UInt8], isFromCache: Bool = false, url: URL? = nil,
        redirects: [GateRedirect]? = nil
    ) {
        self.response = response
        self.body = body
        self.isFromCache = isFromCache
        self.url = url
        self.redirects = redirects
    }

    /// The gate's answer for what `transport` received.
    init(_ transport: GateTransportResponse) {
        self.init(
            response: transport.response, body: transport.body, url: transport.url, redirects: transport.redirects)
    }
}
