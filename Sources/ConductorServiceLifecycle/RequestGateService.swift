public import Conductor
public import ServiceLifecycle

/// A ``RequestGate`` as a swift-service-lifecycle `Service`: it does nothing until the
/// `ServiceGroup` shuts down gracefully (or is cancelled), then shuts the gate down — every
/// pending request ends once with ``GateError/Code/shutDown``, and later ones are refused.
///
/// ```swift
/// let gate = try RequestGate<String>(transport: transport, authorize: authorize, refresh: refresh)
/// let group = ServiceGroup(
///     services: [LauncherService(launcher), RequestGateService(gate), httpServer],
///     gracefulShutdownSignals: [.sigterm],
///     logger: logger
/// )
/// try await group.run()
/// ```
///
/// A group shuts its services down gracefully in the reverse of the order they were given: list
/// the gate after the services that send through it, so they finish their requests first.
public struct RequestGateService<Credential: Sendable>: Service {
    /// The gate this service shuts down.
    public let gate: RequestGate<Credential>

    /// A service that shuts `gate` down on graceful shutdown.
    public init(_ gate: RequestGate<Credential>) {
        self.gate = gate
    }

    /// Waits for graceful shutdown or cancellation, then calls ``RequestGate/shutdown()``.
    public func run() async throws {
        // Throws only when the group cancels this task instead: shut down all the same.
        try? await gracefulShutdown()
        gate.shutdown()
    }
}
