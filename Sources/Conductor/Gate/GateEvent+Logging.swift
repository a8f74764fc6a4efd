public import Logging

extension GateEvent {
    /// Logs the event with its facts as swift-log metadata — request id, name, priority,
    /// attempt, credential version — never a header, so never a credential. Ends, refreshes
    /// and sign-in/out log at `info` or above; the rest at `debug`.
    ///
    /// ```swift
    /// for await event in gate.events { event.log(to: logger) }
    /// ```
    public func log(to logger: Logger) {
        var metadata: Logger.Metadata = [:]
        switch self {
        case .initial(let id, let name, let priority):
            metadata = ["request": "\(id)", "name": "\(name)", "priority": "\(priority)"]
            logger.debug("request entered the gate", metadata: metadata)
        case .coalesced(let name):
            logger.debug("request joined a flight", metadata: ["name": "\(name)"])
        case .queued(let id, let priority):
            logger.debug("request waiting for a slot", metadata: ["request": "\(id)", "priority": "\(priority)"])
        case .running(let id, let attempt, let version):
            metadata = ["request": "\(id)", "attempt": "\(attempt)", "credential_version": "\(version)"]
            logger.debug("request sent", metadata: metadata)
        case .retry(let id, let attempt, let delay):
            metadata = ["request": "\(id)", "attempt": "\(attempt)", "delay_us": "\(delay.microseconds)"]
            logger.notice("request retrying", metadata: metadata)
        case .redirect(let id, let version):
            logger.debug(
                "request's credential rejected; parked behind the refresh",
                metadata: ["request": "\(id)", "credential_version": "\(version)"])
        case .parked(let id, let version):
            logger.debug(
                "request parked behind the refresh", metadata: ["request": "\(id)", "credential_version": "\(version)"])
        case .success(let id, let status):
            logger.debug("request succeeded", metadata: ["request": "\(id)", "status": "\(status)"])
        case .failure(let id, let code):
            logger.notice("request failed", metadata: ["request": "\(id)", "code": "\(code)"])
        case .useCache(let id):
            logger.notice("request answered from the cache", metadata: ["request": "\(id)"])
        case .refreshStarted(let version, let id):
            metadata = ["credential_version": "\(version)"]
            if let id { metadata["request"] = "\(id)" }
            logger.info("refresh started", metadata: metadata)
        case .refreshSucceeded(let version):
            logger.info("refresh succeeded", metadata: ["credential_version": "\(version)"])
        case .refreshFailed(let version):
            logger.error("refresh failed", metadata: ["credential_version": "\(version)"])
        case .refreshCancelled(let version):
            logger.info("refresh cancelled", metadata: ["credential_version": "\(version)"])
        case .refreshWindowExceeded(let refreshes, let period):
            metadata = ["refreshes": "\(refreshes)", "period_us": "\(period.microseconds)"]
            logger.error("refresh refused by the refresh window", metadata: metadata)
        case .signedIn(let version):
            logger.info("signed in", metadata: ["credential_version": "\(version)"])
        case .signedOut:
            logger.info("signed out")
        }
    }
}
