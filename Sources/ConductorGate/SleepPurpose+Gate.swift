/// The request gate's sleeps, as a test clock tells them apart.
extension SleepPurpose {
    /// A request gate's timer for its requests' timeouts (`send(…, timeout:)` and
    /// `GateConfiguration.requestTimeout`).
    package static let requestTimeout = SleepPurpose("requestTimeout")
    /// A request gate's timer for the running refresh's deadline (`refreshTimeout`).
    package static let refreshTimeout = SleepPurpose("refreshTimeout")
    /// The pause before a request gate's next attempt (backoff or `Retry-After`).
    package static let gateBackoff = SleepPurpose("gateBackoff")
}
