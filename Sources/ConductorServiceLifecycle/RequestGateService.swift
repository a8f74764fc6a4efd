public import ConductorGate
public import ServiceLifecycle

/// A ``RequestGate`` as a swift-service-lifecycle `Service`: it does nothing until the
/// `ServiceGroup` shuts down gracefully (or is cancelled), then shuts the gate down — every
/// pending request ends once with ``GateError/Code/shutDown``, and later ones are refused.
///
/// ```swift
/// let gate = try RequestGate<String>(transport: transport, authorize: authorize, refresh: refresh)
/// let group = ServiceGroup(
///     services: [LauncherService(launcher), RequestGateService(gate, name: "payments"), httpServer],
///     gracefulShutdownSignals: [.sigterm],
///     logger: logger
/// )
/// try await group.run()
/// ```
///
/// A group shuts its services down gracefully in the reverse of the order they were given, and
/// waits for each before the next. So list the gate **before** the services that send through
/// it (and after the `LauncherService`, if its start-up tasks do not use the gate): they are
/// shut down first and finish their requests, then the gate ends whatever is still pending.
/// Listed after them, the gate would shut down first, and a request in flight would end with
/// ``GateError/Code/shutDown``.
public struct RequestGateService<Credential: Sendable>: Service, CustomStringConvertible {
    /// The gate this service shuts down.
    public let gate: RequestGate<Credential>
    /// What the service is called in a `ServiceGroup`'s log lines and errors, if given.
    public let name: String?

    /// A service that shuts `gate` down on graceful shutdown.
    ///
    /// - Parameter name: Tells gates apart in the group's log lines and errors: the service's
    ///   ``description`` is `RequestGateService(name)`, or `RequestGateService` without one.
    public init(_ gate: RequestGate<Credential>, name: String? = nil) {
        self.gate = gate
        self.name = name
    }

    /// `RequestGateService(name)`, or `RequestGateService` without a name: what a
    /// `ServiceGroup` calls the service in its log lines and errors.
    public var description: String {
        name.map { "RequestGateService(\($0))" } ?? "RequestGateService"
    }

    /// Waits for graceful shutdown or cancellation, then calls ``RequestGate/shutdown()``.
    public func run() async throws {
        // Throws only when the group cancels this task instead: shut down all the same.
        try? await gracefulShutdown()
        gate.shutdown()
    }
}
