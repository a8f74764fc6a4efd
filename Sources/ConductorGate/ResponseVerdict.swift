public import HTTPTypes

/// How the business code reads a response: a success, worth retrying, a sign the credential
/// has expired, or a failure.
///
/// ```swift
/// let gate = try RequestGate<String>(
///     transport: transport,
///     authorize: { request, token in request.headerFields[.authorization] = "Bearer \(token)" },
///     classify: { response in
///         response.headerFields[HTTPField.Name("X-Error")!] == "token-expired"
///             ? .credentialExpired : ResponseVerdict.standard(for: response)
///     },
///     refresh: { _ in try await auth.fetchToken() }
/// )
/// ```
public struct ResponseVerdict: Hashable, Sendable, CustomStringConvertible {
    fileprivate enum Kind: Hashable, Sendable {
        case success, retry, credentialExpired, failure
    }

    fileprivate let kind: Kind

    /// Hand the response to the caller.
    public static let success = ResponseVerdict(kind: .success)
    /// Try again after a backoff, or after the response's `Retry-After`, within the attempt budget.
    public static let retry = ResponseVerdict(kind: .retry)
    /// The credential the request carried is no longer accepted: park the request, refresh
    /// once, and send it again with the new credential.
    public static let credentialExpired = ResponseVerdict(kind: .credentialExpired)
    /// Fail the request with ``GateError/Code/rejected``.
    public static let failure = ResponseVerdict(kind: .failure)

    public var description: String { "\(kind)" }

    /// The usual reading: 401 means the credential expired; 408, 429, 500, 502, 503 and 504
    /// are worth another attempt; other 4xx and 5xx are failures; everything else succeeds.
    public static func standard(for response: HTTPResponse) -> ResponseVerdict {
        switch response.status.code {
        case 401: .credentialExpired
        case 408, 429, 500, 502, 503, 504: .retry
        case 400...599: .failure
        default: .success
        }
    }
}
