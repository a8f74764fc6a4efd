import Conductor
import ConductorURLSession
import Foundation
import HTTPTypes

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension TokenServer {
    /// A gate in front of this server, set up as a real client would: a URL session whose
    /// tasks end after 30 s without data (a body cut off in a way the platform's URL loading
    /// does not notice ends as a transport error), requests and refreshes with deadlines (so
    /// none holds its slot for ever), and a refresh that is a `POST /token` sent straight to
    /// the transport. The gate starts with the credential `"stale"`; `finish` ends the session.
    /// `clock` is the gate's: a test whose outcome must not depend on how fast the machine is
    /// passes a `ManualClock`, and the request's and refresh's deadlines then never pass.
    func gate(
        _ configuration: GateConfiguration, clock: some Clock<Duration> = ContinuousClock()
    ) throws(GateError) -> (gate: RequestGate<String>, finish: @Sendable () -> Void) {
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        // Not shorter: in the full parallel suite on two cores the server's tasks wait behind
        // hundreds of tests for the cooperative pool, and a loopback round trip was measured
        // at 3.5 s; one that outlasted a 10 s limit failed a login in CI.
        sessionConfiguration.timeoutIntervalForRequest = 30
        let session = URLSession(configuration: sessionConfiguration)
        let transport = URLSessionTransport(session: session)
        var configuration = configuration
        configuration.refreshTimeout = .seconds(40)
        configuration.requestTimeout = .seconds(50)
        let authority = authority
        let gate = try RequestGate<String>(
            transport: transport,
            credential: "stale",
            configuration: configuration,
            clock: clock,
            authorize: { request, token in request.headerFields[.authorization] = "Bearer \(token)" },
            refresh: { _ in
                let request = HTTPRequest(method: .post, scheme: "http", authority: authority, path: "/token")
                let (response, body) = try await transport.send(request, body: .bytes([])).headAndBody
                guard response.status == .ok else { throw RefreshRejected(status: response.status.code) }
                return String(decoding: body, as: UTF8.self)
            }
        )
        return (gate, { session.finishTasksAndInvalidate() })
    }
}
