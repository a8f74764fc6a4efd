/// Whether a request sent through a ``RequestGate`` carries the gate's credential.
///
/// ```swift
/// // The login call itself, and public endpoints, need no credential:
/// let reply = try await gate.send(login, authorization: .anonymous)
/// gate.signIn(try decodeToken(reply.body))
/// ```
///
/// An ``anonymous`` request skips `authorize`, never parks behind a refresh, never starts
/// one (a 401 is an ordinary response for it, classified as ``ResponseVerdict/credentialExpired``
/// it ends with ``GateError/Code/rejected``), and is never failed by
/// ``RequestGate/signOut()``. A coalesced flight keeps the authorization of the request that
/// started it.
public struct RequestAuthorization: Hashable, Sendable, CustomStringConvertible {
    private enum Kind: Hashable, Sendable {
        case required, anonymous
    }

    private let kind: Kind

    /// The request carries the current credential (the default).
    public static let required = RequestAuthorization(kind: .required)
    /// The request carries no credential.
    public static let anonymous = RequestAuthorization(kind: .anonymous)

    var isRequired: Bool { kind == .required }

    public var description: String { "\(kind)" }
}
