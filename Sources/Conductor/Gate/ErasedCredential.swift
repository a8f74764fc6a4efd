import HTTPTypes

/// A ``RequestGate``'s credential with its type erased, so the gate's storage and state
/// machine are not generic over it (see ``GateStorage``).
///
/// The storage never looks inside a credential: it hands it to the user's closures, which are
/// bound to it here, once per credential (a sign-in or a refresh), by the façade that knows its
/// type — so no cast ever brings the type back.
///
/// A class, not a struct of three closures: the gate copies the current credential into every
/// look that sends (a slot's first look, a queued attempt started, a parked request handed a
/// slot), and a copy is then one retain instead of three. Immutable, hence `Sendable`.
final class ErasedCredential: Sendable {
    /// Adds this credential to a request: the gate's `authorize`, called with the credential.
    let authorize: @Sendable (inout HTTPRequest) -> Void
    /// The user's `requiresRefresh`, asked about this credential now; `nil` without one.
    let isStale: (@Sendable () -> Bool)?
    /// The user's `refresh`, called with this credential: the credential that replaces it.
    let refreshed: @Sendable () async throws -> ErasedCredential

    init(
        authorize: @escaping @Sendable (inout HTTPRequest) -> Void, isStale: (@Sendable () -> Bool)?,
        refreshed: @escaping @Sendable () async throws -> ErasedCredential
    ) {
        self.authorize = authorize
        self.isStale = isStale
        self.refreshed = refreshed
    }

    /// The user's closures for a `Credential`, which bind each credential they meet.
    struct Binding<Credential: Sendable>: Sendable {
        let authorize: @Sendable (inout HTTPRequest, Credential) -> Void
        let isStale: (@Sendable (Credential) -> Bool)?
        let refresh: @Sendable (Credential?) async throws -> Credential

        func bind(_ credential: Credential) -> ErasedCredential {
            let authorize = self.authorize
            let refresh = self.refresh
            var isStale: (@Sendable () -> Bool)?
            if let judge = self.isStale {
                isStale = { @Sendable () -> Bool in judge(credential) }
            }
            let binding = self
            return ErasedCredential(
                authorize: { @Sendable (request: inout HTTPRequest) -> Void in authorize(&request, credential) },
                isStale: isStale,
                refreshed: { @Sendable () async throws -> ErasedCredential in
                    binding.bind(try await refresh(credential))
                }
            )
        }

        /// A first credential, for a gate created without one.
        func fetchFirst() async throws -> ErasedCredential {
            bind(try await refresh(nil))
        }
    }
}
