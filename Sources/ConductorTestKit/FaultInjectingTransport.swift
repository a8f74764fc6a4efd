public import Conductor
public import HTTPTypes

/// A transport that asks a ``Simulation``'s fault plan before each send: it fails, cancels or
/// delays the send at `point` as the seed draws, then hands the request to `base`.
///
/// ```swift
/// let transport = FaultInjectingTransport(Canned(), simulation: simulation)  // any transport
/// let gate = try RequestGate<String>(transport: transport, clock: simulation.clock, authorize: authorize, refresh: refresh)
/// try await Simulation.explore(seeds: 1...500, faults: FaultPlan().failing("send", rate: 0.1), loadPage)
/// ```
///
/// Each send is a visit keyed by its method and path, so a path's faults do not depend on the
/// order in which the seed interleaves the requests. An injected failure is
/// `TransportFailure.transient` (the gate retries it, as it would a lost connection); other
/// errors are classified by `base`.
public struct FaultInjectingTransport<Base: GateTransport>: GateTransport {
    public let base: Base
    public let point: String
    private let simulation: Simulation

    /// - Parameters:
    ///   - base: The transport that sends what is not failed or cancelled.
    ///   - simulation: Whose seed and fault plan decide.
    ///   - point: The name the plan gives the sends; `"send"` by default.
    public init(_ base: Base, simulation: Simulation, point: String = "send") {
        self.base = base
        self.simulation = simulation
        self.point = point
    }

    public func send(_ request: HTTPRequest, body: GateRequestBody?) async throws -> GateTransportResponse {
        try await simulation.injectFault(at: point, key: "\(request.method) \(request.path ?? "")")
        return try await base.send(request, body: body)
    }

    public func classify(_ error: any Error) -> TransportFailure {
        error is InjectedFault ? .transient : base.classify(error)
    }
}
