/// The credential side of a ``RequestGate``: which credential is current, its version, and
/// whether one refresh is under way. A value type with no concurrency in it.
///
/// Versions count credentials: 0 means none yet, and each successful refresh adds one. A
/// rejection names the version the request carried, which is how a late rejection of an old
/// credential is told apart from a rejection of the current one.
struct CredentialStateMachine<Credential> {
    enum RejectionAction: Equatable {
        /// A newer credential exists already: send again with it.
        case resend
        /// A refresh of this version is under way: wait for it.
        case awaitRefresh
        /// Start the one refresh of this version.
        case startRefresh
    }

    private(set) var credential: Credential?
    private(set) var version: Int
    private(set) var isRefreshing = false
    /// Refreshes started: never more than one per version while the earlier ones succeed.
    private(set) var refreshesStarted = 0
    /// Failed refreshes so far. A request that started waiting before a failure fails with it.
    private(set) var failureEpoch = 0
    private(set) var lastFailure: String?

    init(credential: Credential?) {
        self.credential = credential
        self.version = credential == nil ? 0 : 1
    }

    /// The server rejected (or the gate lacks) credential `sentVersion`.
    mutating func rejected(sentVersion: Int) -> RejectionAction {
        if sentVersion < version { return .resend }
        if isRefreshing { return .awaitRefresh }
        isRefreshing = true
        refreshesStarted += 1
        return .startRefresh
    }

    /// Returns the new version.
    mutating func refreshSucceeded(with credential: Credential) -> Int {
        precondition(isRefreshing, "refreshSucceeded without a refresh")
        self.credential = credential
        version += 1
        isRefreshing = false
        return version
    }

    mutating func refreshFailed(reason: String) {
        precondition(isRefreshing, "refreshFailed without a refresh")
        isRefreshing = false
        failureEpoch += 1
        lastFailure = reason
    }
}
