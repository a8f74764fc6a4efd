public import Foundation
public import HTTPTypes

/// One redirect a transport followed on the way to a response: the URL that answered with it,
/// and its status.
///
/// ```swift
/// let reply = try await gate.send(request)
/// for hop in reply.redirects ?? [] { print("\(hop.status.code) from \(hop.url)") }  // "302 from https://…/old"
/// print("answered by \(reply.url?.absoluteString ?? "an unknown URL")")
/// ```
///
/// Where it led is the next redirect's ``url``, or the response's own URL after the last one.
public struct GateRedirect: Sendable, Hashable {
    /// The URL that answered with the redirect.
    public var url: URL
    /// The redirect's status: `301`, `302`, `303`, `307` or `308`.
    public var status: HTTPResponse.Status

    public init(url: URL, status: HTTPResponse.Status) {
        self.url = url
        self.status = status
    }
}
