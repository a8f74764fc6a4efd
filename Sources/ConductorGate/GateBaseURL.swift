import Foundation
import HTTPTypes

/// ``GateConfiguration/baseURL`` taken apart once, when the gate is made: what a request that
/// names only a path takes from it.
struct GateBaseURL: Sendable {
    let scheme: String
    let authority: String
    /// The base URL's path without its trailing slash: `""` or `"/v1"`.
    let pathPrefix: String

    /// `nil` for a URL that cannot be a base: no scheme, no host, or a query or fragment.
    init?(_ url: URL) {
        guard let scheme = url.scheme, url.host != nil, url.query == nil, url.fragment == nil else { return nil }
        let absolute = url.absoluteString
        guard let start = absolute.range(of: "://")?.upperBound else { return nil }
        let rest = absolute[start...]
        self.scheme = scheme
        self.authority = String(rest[..<(rest.firstIndex { "/?#".contains($0) } ?? rest.endIndex)])
        var path = url.path(percentEncoded: true)
        while path.hasSuffix("/") { path.removeLast() }
        self.pathPrefix = path
    }

    /// `request` as it is sent: unchanged when it names its scheme and authority; otherwise with
    /// this base's scheme and authority, and its path after the base's path.
    func resolve(_ request: HTTPRequest) -> HTTPRequest {
        var resolved = request
        resolved.scheme = scheme
        resolved.authority = authority
        let path = request.path ?? ""
        resolved.path =
            switch path.first {
            case nil: pathPrefix.isEmpty ? "/" : pathPrefix
            case "/": pathPrefix + path
            case "?": (pathPrefix.isEmpty ? "/" : pathPrefix) + path
            default: pathPrefix + "/" + path
            }
        return resolved
    }
}

extension HTTPRequest {
    /// This request with a scheme and an authority, from `base` when it names neither; throws
    /// ``GateError/Code/incompleteURL`` when it names one of them only, or neither and there is
    /// no base.
    func resolved(against base: GateBaseURL?, name: String) throws(GateError) -> HTTPRequest {
        switch (scheme, authority) {
        case (.some, .some): return self
        case (nil, nil):
            guard let base else { throw .incompleteURL(name, missing: "a scheme and an authority", hasBase: false) }
            return base.resolve(self)
        case (nil, .some): throw .incompleteURL(name, missing: "a scheme", hasBase: base != nil)
        case (.some, nil): throw .incompleteURL(name, missing: "an authority", hasBase: base != nil)
        }
    }
}
