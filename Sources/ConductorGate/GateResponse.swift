public import HTTPTypes

/// What a ``RequestGate`` hands back: the response, its body, and where it came from.
///
/// ```swift
/// let reply = try await gate.send(request)
/// if reply.isFromCache { showOfflineBanner() }
/// render(reply.body)
/// ```
public struct GateResponse: Sendable, Hashable {
    /// The response head.
    public var response: HTTPResponse
    /// The response body.
    public var body: [UInt8]
    /// `true` when the network failed and this came from the gate's ``ResponseCache``.
    public var isFromCache: Bool

    public init(response: HTTPResponse, body: [UInt8], isFromCache: Bool = false) {
        self.response = response
        self.body = body
        self.isFromCache = isFromCache
    }
}
