import HTTPTypes

/// A ``RequestGate``'s credential with its type erased, so the gate's storage and state
/// machine are not generic over it (see ``GateStorage``).
///
/// The storage only ever hands a credential to the user's `authorize`, which is bound to it
/// here once per credential (a sign-in or a refresh), and back to the user's `refresh`,
/// through the façade that knows its type.
struct ErasedCredential: Sendable {
    private let value: any Sendable
    /// Adds this credential to a request: the gate's `authorize`, called with the credential.
    let authorize: @Sendable (inout HTTPRequest) -> Void

    init<Credential: Sendable>(
        _ credential: Credential, authorize: @escaping @Sendable (inout HTTPRequest, Credential) -> Void
    ) {
        value = credential
        self.authorize = { request in authorize(&request, credential) }
    }

    /// The credential, as the type it was made from.
    func value<Credential>(as _: Credential.Type) -> Credential {
        // Only a `RequestGate<Credential>` makes and reads its storage's credentials.
        value as! Credential
    }
}
