public import Logging

extension GateEvent {
    /// Logs the event with its facts as swift-log metadata — request id, name, priority,
    /// attempt, credential version — never a header, so never a credential. Ends, refreshes
    /// and sign-in/out log at `info` or above, except a request cancelled by its caller, which
    /// logs at `debug` like the other steps of a request.
    ///
    /// ```swift
    /// for await event in gate.events { event.log(to: logger) }
    /// ```
    ///
    /// The gate's own `logger` (``RequestGate/init(transport:credential:configuration:cache:clock:logger:authorize:classify:requiresRefresh:refresh:)``)
    /// gets more: a request's lines also carry its method, host and path (never the query), the
    /// metadata its caller passed to `send`, and, on a retry or a failure, the reason.
    public func log(to logger: Logger) {
        log(to: logger, context: [:])
    }

    /// Logs the event with `context` (the request's facts beyond the event's own) added to its
    /// metadata; the event's own keys win.
    func log(to logger: Logger, context: Logger.Metadata) {
        let (level, message, own) = line
        var metadata = own
        if !context.isEmpty { metadata.merge(context) { own, _ in own } }
        logger.log(level: level, "\(message)", metadata: metadata)
    }

    /// The request the event is about, if it is about one.
    var requestID: UInt64? {
        switch self {
        case .initial(let id, _, _), .queued(let id, _), .running(let id, _, _), .retry(let id, _, _),
            .redirect(let id, _), .parked(let id, _), .success(let id, _), .failure(let id, _), .useCache(let id):
            id
        case .refreshStarted(_, let id): id
        case .coalesced, .refreshSucceeded, .refreshFailed, .refreshCancelled, .refreshWindowExceeded, .signedIn,
            .signedOut:
            nil
        }
    }

    private var line: (Logger.Level, String, Logger.Metadata) {
        switch self {
        case .initial(let id, let name, let priority):
            (.debug, "request entered the gate", ["request": "\(id)", "name": "\(name)", "priority": "\(priority)"])
        case .coalesced(let name):
            (.debug, "request joined a flight", ["name": "\(name)"])
        case .queued(let id, let priority):
            (.debug, "request waiting for a slot", ["request": "\(id)", "priority": "\(priority)"])
        case .running(let id, let attempt, let version):
            (
                .debug, "request sent",
                ["request": "\(id)", "attempt": "\(attempt)", "credential_version": "\(version)"]
            )
        case .retry(let id, let attempt, let delay):
            (
                .notice, "request retrying",
                ["request": "\(id)", "attempt": "\(attempt)", "delay_us": "\(delay.microseconds)"]
            )
        case .redirect(let id, let version):
            (
                .debug, "request's credential rejected; parked behind the refresh",
                ["request": "\(id)", "credential_version": "\(version)"]
            )
        case .parked(let id, let version):
            (.debug, "request parked behind the refresh", ["request": "\(id)", "credential_version": "\(version)"])
        case .success(let id, let status):
            (.debug, "request succeeded", ["request": "\(id)", "status": "\(status)"])
        case .failure(let id, let code):
            // The caller's own cancel is no incident of the gate's.
            (code == .cancelled ? .debug : .notice, "request failed", ["request": "\(id)", "code": "\(code)"])
        case .useCache(let id):
            (.notice, "request answered from the cache", ["request": "\(id)"])
        case .refreshStarted(let version, nil):
            (.info, "refresh started", ["credential_version": "\(version)"])
        case .refreshStarted(let version, let id?):
            (.info, "refresh started", ["credential_version": "\(version)", "request": "\(id)"])
        case .refreshSucceeded(let version):
            (.info, "refresh succeeded", ["credential_version": "\(version)"])
        case .refreshFailed(let version):
            (.error, "refresh failed", ["credential_version": "\(version)"])
        case .refreshCancelled(let version):
            (.info, "refresh cancelled", ["credential_version": "\(version)"])
        case .refreshWindowExceeded(let refreshes, let period):
            (
                .error, "refresh refused by the refresh window",
                ["refreshes": "\(refreshes)", "period_us": "\(period.microseconds)"]
            )
        case .signedIn(let version):
            (.info, "signed in", ["credential_version": "\(version)"])
        case .signedOut:
            (.info, "signed out", [:])
        }
    }
}
