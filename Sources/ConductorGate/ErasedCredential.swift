import HTTPTypes
import Synchronization

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
///
/// Made in the task that signed in or refreshed and read in the tasks of the requests it is
/// handed to, often through a continuation's resume: its closures are published with a
/// releasing store and read after an acquiring load (as ``Handoff`` does), an edge
/// ThreadSanitizer sees where the runtime's own hand-over of a resumed value is invisible to it.
final class ErasedCredential: Sendable {
    private let storedAuthorize: @Sendable (inout HTTPRequest) -> Void
    private let storedIsStale: (@Sendable () -> Bool)?
    private let storedRefreshed: @Sendable () async throws -> ErasedCredential
    private let published = Atomic<Bool>(false)

    /// Adds this credential to a request: the gate's `authorize`, called with the credential.
    var authorize: @Sendable (inout HTTPRequest) -> Void {
        _ = published.load(ordering: .acquiring)
        return storedAuthorize
    }
    /// The user's `requiresRefresh`, asked about this credential now; `nil` without one.
    var isStale: (@Sendable () -> Bool)? {
        _ = published.load(ordering: .acquiring)
        return storedIsStale
    }
    /// The user's `refresh`, called with this credential: the credential that replaces it.
    var refreshed: @Sendable () async throws -> ErasedCredential {
        _ = published.load(ordering: .acquiring)
        return storedRefreshed
    }

    init(
        authorize: @escaping @Sendable (inout HTTPRequest) -> Void, isStale: (@Sendable () -> Bool)?,
        refreshed: @escaping @Sendable () async throws -> ErasedCredential
    ) {
        storedAuthorize = authorize
        storedIsStale = isStale
        storedRefreshed = refreshed
        published.store(true, ordering: .releasing)
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
