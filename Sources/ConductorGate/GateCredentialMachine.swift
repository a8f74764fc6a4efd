import DequeModule

/// The credential part of a ``GateStateMachine``, as a value type with no concurrency in it.
///
/// It owns the credential and its version, the one refresh (idle, refreshing or failed), the
/// requests parked behind it, the refresh window and the backoff jitter. Which requests are
/// open is the flights' (``FlightTable``). Every operation is one transition and returns one action; the storage performs the
/// action after releasing its lock. `Waiter` is whatever the storage resumes when a parked
/// request may go on (a continuation); tests use plain values.
///
/// Versions count credentials: 0 means none yet, and each successful refresh or sign-in adds
/// one. A rejection names the version the request carried, which is how a late rejection of an
/// old credential is told apart from a rejection of the current one. The rule that keeps the
/// old credential off the wire: the transition that decides a refresh also enters
/// `.refreshing`, and while refreshing, ``authorize(request:epoch:needsAuthorization:waiter:)``
/// parks every request that needs the credential instead of handing out the old one.
struct GateCredentialMachine<Credential, Waiter> {
    typealias Failure = GateFailure
    typealias RefreshFlight = GateRefreshFlight

    enum Refresh: Equatable {
        case idle
        case refreshing(RefreshFlight)
        /// The last refresh failed (why: ``lastFailure``); the credential it was to replace is
        /// still current, and the next rejection of it may start a new refresh.
        case failed
    }

    /// What a request in a slot does next.
    enum AuthorizeAction {
        /// Send now with this credential (`nil` for a request that needs no authorization).
        case send(Credential?, version: Int)
        /// Parked behind the running refresh: release the slot and wait for the waiter.
        case park
        /// Parked, and this transition started a refresh: release the slot, then run it.
        case parkAndRefresh(RefreshFlight, replacing: Credential?)
        /// End the request with this failure, without sending.
        case fail(Failure)
    }

    /// What ``authorizeWithoutParking(epoch:needsAuthorization:)`` decides: the two outcomes of
    /// ``AuthorizeAction`` that do not park, so a caller of it has no parking case to rule out.
    enum UnparkedAction {
        case send(Credential?, version: Int)
        case fail(Failure)
    }

    /// What a request rejected for its credential does next.
    enum RejectionAction {
        /// A newer credential exists already: send again with it.
        case resend
        case park
        case parkAndRefresh(RefreshFlight, replacing: Credential?)
        case fail(Failure)
    }

    /// How a request that must wait for a credential goes on: behind the running refresh, behind
    /// one this transition started, or not at all. The one ladder that ``authorize(request:epoch:needsAuthorization:waiter:now:)``,
    /// ``rejected(request:sentVersion:waiter:now:judgedStale:)`` and
    /// ``refreshNow(caller:waiter:now:)`` share.
    private enum WaitAction {
        case park
        case parkAndRefresh(RefreshFlight)
        case fail(Failure)
    }

    /// What ``refreshNow(caller:waiter:now:)`` does.
    enum RefreshNowAction {
        /// Joined the running refresh: wait for the waiter.
        case join
        /// Started a refresh: run it, then wait for the waiter.
        case start(RefreshFlight, replacing: Credential?)
        case fail(Failure)
    }

    /// What the end of a refresh does.
    enum RefreshEndAction {
        /// The refresh was current: its waiters go on (`failure == nil`) or fail.
        case settle(waiters: [Waiter], version: Int, failure: Failure?)
        /// A sign-in, sign-out or shutdown replaced this refresh: its result is discarded.
        case discard
    }

    /// What a sign-in, sign-out or shutdown does.
    struct ReplaceAction {
        /// The refresh to cancel, if one ran.
        var cancelledRefresh: RefreshFlight?
        /// Parked requests: they go on with the new credential (`failure == nil`) or fail.
        var waiters: [Waiter]
        var failure: Failure?
        var version: Int
    }

    let refreshWindow: (maxRefreshes: Int, period: Duration)?

    private(set) var credential: Credential?
    private(set) var version: Int
    private(set) var refresh: Refresh = .idle
    private(set) var isSignedOut = false
    private(set) var isShutDown = false
    /// Bumped by every failure that dooms the requests waiting for a slot: a request that
    /// queued before a failure fails with it rather than going out with the credential that
    /// failed.
    private(set) var failureEpoch = 0
    private(set) var lastFailure: Failure?
    /// Refreshes started so far.
    private(set) var refreshesStarted = 0
    /// Parked requests in the order they parked, which is the order a refresh's end wakes them
    /// in (and so the order they queue for a slot again). Only a cancelled request searches it.
    private var parked: [(id: UInt64, waiter: Waiter)] = []
    /// Start times of the refreshes within the window, oldest first.
    private var windowStarts: Deque<Duration> = []
    private var nextRefreshID: UInt64 = 0
    /// The backoff's jitter, seedable so a test replays it.
    private var jitter: SplitMix64

    init(
        credential: Credential?, refreshWindow: (maxRefreshes: Int, period: Duration)?,
        jitterSeed: UInt64?
    ) {
        self.credential = credential
        self.version = credential == nil ? 0 : 1
        self.refreshWindow = refreshWindow.map { (max(1, $0.maxRefreshes), $0.period) }
        self.jitter = SplitMix64(seed: jitterSeed ?? UInt64.random(in: .min ... .max))
    }

    var parkedCount: Int { parked.count }

    // MARK: - Requests

    /// The failure that refuses a new flight at once: after shutdown, and after a sign-out for
    /// a request that needs authorization.
    func refusal(needsAuthorization: Bool) -> Failure? {
        if isShutDown { return .shutDown }
        if needsAuthorization && isSignedOut { return .signedOut }
        return nil
    }

    /// A request holds a slot and is about to send. `epoch` is ``failureEpoch`` as the request
    /// saw it when it queued for the slot.
    mutating func authorize(
        request id: UInt64, epoch: Int, needsAuthorization: Bool, waiter: Waiter?, now: Duration
    ) -> AuthorizeAction {
        switch authorizeWithoutParking(epoch: epoch, needsAuthorization: needsAuthorization) {
        case .send(let credential, let version): return .send(credential, version: version)
        case .fail(let failure): return .fail(failure)
        case nil: break
        }
        // A refresh runs, or there is no credential yet (created without one): the first
        // request refreshes.
        switch wait(request: id, waiter: waiter, trigger: id, now: now) {
        case .park: return .park
        case .parkAndRefresh(let flight): return .parkAndRefresh(flight, replacing: nil)
        case .fail(let failure): return .fail(failure)
        }
    }

    /// What ``authorize(request:epoch:needsAuthorization:waiter:now:)`` decides when that is
    /// to send or to fail, or `nil` when it would park the request (a refresh runs, or there is
    /// no credential yet). Changes nothing, so the storage can decide the common case without
    /// preparing to park.
    func authorizeWithoutParking(epoch: Int, needsAuthorization: Bool) -> UnparkedAction? {
        if isShutDown { return .fail(.shutDown) }
        guard needsAuthorization else { return .send(nil, version: version) }
        if isSignedOut { return .fail(.signedOut) }
        if epoch < failureEpoch, let lastFailure { return .fail(lastFailure) }
        if case .refreshing = refresh { return nil }
        if let credential { return .send(credential, version: version) }
        return nil
    }

    /// The server rejected credential `sentVersion` of request `id`. Without a `waiter` (the
    /// request has no attempt left) the request is not parked, but the refresh the rejection
    /// calls for still starts.
    ///
    /// `judgedStale`: nobody rejected the credential; the app's judge called it stale before
    /// sending. Then a refresh the window does not allow is not a failure: the request is sent
    /// with what is current (`.resend`) and the server judges, and nothing else fails with it.
    mutating func rejected(
        request id: UInt64, sentVersion: Int, waiter: Waiter?, now: Duration, judgedStale: Bool = false
    ) -> RejectionAction {
        if isShutDown { return .fail(.shutDown) }
        if isSignedOut { return .fail(.signedOut) }
        if sentVersion < version { return .resend }
        if judgedStale, !isRefreshing, !windowAllowsRefresh(now: now) { return .resend }
        switch wait(request: id, waiter: waiter, trigger: id, now: now) {
        case .park: return .park
        case .parkAndRefresh(let flight): return .parkAndRefresh(flight, replacing: credential)
        case .fail(let failure): return .fail(failure)
        }
    }

    /// A refresh asked for from outside (``RequestGate/refresh()``), by `caller` (an id from
    /// the requests' sequence): joins the running one or starts one, and parks `waiter` until
    /// it ends.
    mutating func refreshNow(caller id: UInt64, waiter: Waiter, now: Duration) -> RefreshNowAction {
        if isShutDown { return .fail(.shutDown) }
        if isSignedOut { return .fail(.signedOut) }
        switch wait(request: id, waiter: waiter, trigger: nil, now: now) {
        case .park: return .join
        case .parkAndRefresh(let flight): return .start(flight, replacing: credential)
        case .fail(let failure): return .fail(failure)
        }
    }

    /// A parked request's caller went away; returns its waiter if it was still parked.
    mutating func cancelParked(request id: UInt64) -> Waiter? {
        guard let index = parked.firstIndex(where: { $0.id == id }) else { return nil }
        return parked.remove(at: index).waiter
    }

    /// The backoff before the next attempt, after failed attempt `attempt`, on the request's
    /// `schedule`.
    mutating func backoffDelay(afterAttempt attempt: Int, on schedule: RetrySchedule) -> Duration {
        schedule.delay(afterAttempt: attempt, jitter: &jitter)
    }

    // MARK: - The refresh

    mutating func refreshSucceeded(_ flight: RefreshFlight, with credential: Credential) -> RefreshEndAction {
        guard case .refreshing(flight) = refresh else { return .discard }
        self.credential = credential
        version += 1
        refresh = .idle
        return .settle(waiters: takeParked(), version: version, failure: nil)
    }

    mutating func refreshFailed(_ flight: RefreshFlight, _ failure: Failure) -> RefreshEndAction {
        guard case .refreshing(flight) = refresh else { return .discard }
        refresh = .failed
        fail(with: failure)
        return .settle(waiters: takeParked(), version: version, failure: failure)
    }

    // MARK: - Credentials from outside

    /// The credential set from outside becomes the newest version; parked requests go on with
    /// it, a running refresh is cancelled (its result will be discarded), and the refresh
    /// window starts afresh.
    mutating func signIn(_ credential: Credential) -> ReplaceAction? {
        guard !isShutDown else { return nil }
        let cancelled = runningRefresh
        self.credential = credential
        version += 1
        isSignedOut = false
        refresh = .idle
        windowStarts.removeAll()
        return ReplaceAction(cancelledRefresh: cancelled, waiters: takeParked(), failure: nil, version: version)
    }

    /// Clears the credential: a running refresh is cancelled; parked requests and those queued
    /// for a slot that need authorization fail with `.signedOut`, as do later ones until
    /// ``signIn(_:)``.
    mutating func signOut() -> ReplaceAction? {
        guard !isShutDown else { return nil }
        let cancelled = runningRefresh
        credential = nil
        isSignedOut = true
        refresh = .idle
        fail(with: .signedOut)
        return ReplaceAction(
            cancelledRefresh: cancelled, waiters: takeParked(), failure: .signedOut, version: version)
    }

    mutating func shutdown() -> ReplaceAction? {
        guard !isShutDown else { return nil }
        let cancelled = runningRefresh
        isShutDown = true
        refresh = .idle
        return ReplaceAction(cancelledRefresh: cancelled, waiters: takeParked(), failure: .shutDown, version: version)
    }

    // MARK: - Private

    private var runningRefresh: RefreshFlight? {
        if case .refreshing(let flight) = refresh { flight } else { nil }
    }

    private var isRefreshing: Bool { runningRefresh != nil }

    /// Whether `flight` is the refresh running now (a sign-in, sign-out or shutdown may have
    /// replaced it before its task was recorded).
    func isRunning(_ flight: RefreshFlight) -> Bool {
        runningRefresh == flight
    }

    /// Parks `waiter` (request `id`) behind the running refresh, or behind one started now for
    /// `trigger`; fails when the refresh window refuses that refresh.
    private mutating func wait(request id: UInt64, waiter: Waiter?, trigger: UInt64?, now: Duration) -> WaitAction {
        var action = WaitAction.park
        if !isRefreshing {
            switch startRefresh(trigger: trigger, now: now) {
            case .success(let flight): action = .parkAndRefresh(flight)
            case .failure(let failure): return .fail(failure)
            }
        }
        if let waiter { parked.append((id, waiter)) }
        return action
    }

    private mutating func startRefresh(trigger: UInt64?, now: Duration) -> Result<RefreshFlight, Failure> {
        if let (_, period) = refreshWindow {
            guard windowAllowsRefresh(now: now) else {
                let failure = Failure.refreshWindowExceeded(refreshes: windowStarts.count, period: period)
                refresh = .failed
                fail(with: failure)
                return .failure(failure)
            }
            windowStarts.append(now)
        }
        let flight = RefreshFlight(id: nextRefreshID, fromVersion: version, trigger: trigger)
        nextRefreshID += 1
        refreshesStarted += 1
        refresh = .refreshing(flight)
        return .success(flight)
    }

    /// Whether the refresh window allows a refresh now (and forgets the starts that left it).
    private mutating func windowAllowsRefresh(now: Duration) -> Bool {
        guard let (maxRefreshes, period) = refreshWindow else { return true }
        while let first = windowStarts.first, first <= now - period { windowStarts.removeFirst() }
        return windowStarts.count < maxRefreshes
    }

    private mutating func fail(with failure: Failure) {
        failureEpoch += 1
        lastFailure = failure
    }

    private mutating func takeParked() -> [Waiter] {
        defer { parked.removeAll() }
        return parked.map(\.waiter)
    }
}

/// What a refresh threw. Compared by its text, so that failures stay `Equatable` for the
/// machine's tests; the error itself reaches the caller as ``GateError/underlyingError``.
struct RefreshError: Equatable, Sendable {
    let error: any Error

    static func == (lhs: RefreshError, rhs: RefreshError) -> Bool {
        "\(lhs.error)" == "\(rhs.error)"
    }
}

/// Why the requests waiting behind a ``GateCredentialMachine``'s credential fail. Not nested in the
/// generic machine: a nested type is generic too, and the gate's continuations carry it, so its
/// metadata would be looked up at run time on every park and wake (a cycle: the machine's
/// `Waiter` resumes with a value that holds a `Failure` of the same machine).
enum GateFailure: Error, Equatable {
    case refreshFailed(RefreshError)
    case refreshTimedOut(after: Duration)
    case refreshWindowExceeded(refreshes: Int, period: Duration)
    case signedOut
    case shutDown

    /// Journals what refusing a request for this failure shows: only the refresh window's
    /// refusal is an event of its own.
    func record(in events: inout [GateEvent]) {
        if case .refreshWindowExceeded(let refreshes, let period) = self {
            events.append(.refreshWindowExceeded(refreshes: refreshes, period: period))
        }
    }
}

/// One refresh of a ``GateCredentialMachine``: which one, the version it replaces, the request whose
/// rejection (or stale credential) started it — `nil` for ``RequestGate/refresh()``.
struct GateRefreshFlight: Equatable, Sendable {
    var id: UInt64
    var fromVersion: Int
    var trigger: UInt64?
}
