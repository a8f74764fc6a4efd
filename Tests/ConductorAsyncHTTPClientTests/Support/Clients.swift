import AsyncHTTPClient
import Conductor
import ConductorAsyncHTTPClient
import Foundation
import HTTPTypes
import NIOCore
import NIOPosix
import Testing
import Tracing

/// Runs `body` with a new client on the shared event loops, and shuts the client down after
/// it, whatever `body` did: a test owns its client, as a user does. The client is set up as
/// the transport's docs say: no retrying of a connection that was refused, which fails the
/// attempt at once. `connectionsPerHost` is the pool's limit (AsyncHTTPClient's default is 8:
/// more requests wait in the client); `connectTimeout` replaces AsyncHTTPClient's 10 seconds.
func withClient<Result: Sendable>(
    tracer: (any Tracer)? = nil,
    connectionsPerHost: Int = 8,
    connectTimeout: TimeAmount? = nil,
    _ body: (HTTPClient) async throws -> Result
) async throws -> Result {
    var configuration = HTTPClient.Configuration()
    configuration.tracing.tracer = tracer
    configuration.connectionPool.retryConnectionEstablishment = false
    configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = connectionsPerHost
    if let connectTimeout { configuration.timeout.connect = connectTimeout }
    let client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
    do {
        let result = try await body(client)
        try await client.shutdown()
        return result
    } catch {
        try? await client.shutdown()
        throw error
    }
}

/// `127.0.0.1:<port>` of a port nothing listens on: bound to a free port, then closed, so a
/// connection to it is refused.
func closedPortAuthority() async throws -> String {
    let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        .bind(host: "127.0.0.1", port: 0).get()
    let port = try #require(channel.localAddress?.port)
    try await channel.close()
    return "127.0.0.1:\(port)"
}

/// Whether `error` is SwiftNIO's error for a connection refused — an `IOError` with
/// `ECONNREFUSED` (connecting to an address), or a `NIOConnectionError` that holds one
/// (connecting to a host name) — and its description says so.
func isARefusedConnection(_ error: any Error) -> Bool {
    let refused: Bool =
        switch error {
        case let error as IOError: error.errnoCode == ECONNREFUSED
        case let error as NIOConnectionError:
            error.connectionErrors.contains { ($0.error as? IOError)?.errnoCode == ECONNREFUSED }
        default: false
        }
    return refused && "\(error)".contains("Connection refused")
}

extension FaultServer {
    func request(_ path: String, method: HTTPRequest.Method = .get) -> HTTPRequest {
        HTTPRequest(method: method, scheme: "http", authority: authority, path: path)
    }

    /// A gate in front of this server through `transport`, starting with the credential
    /// `"stale"`; its refresh is a `POST /token` sent straight to the transport.
    func gate(
        _ transport: AsyncHTTPClientTransport,
        _ configuration: GateConfiguration = GateConfiguration(jitterSeed: 7)
    ) throws -> RequestGate<String> {
        let token = request("/token", method: .post)
        var configuration = configuration
        configuration.eventRetention = 10_000
        return try RequestGate<String>(
            transport: transport,
            credential: "stale",
            configuration: configuration,
            authorize: { request, token in request.headerFields[.authorization] = "Bearer \(token)" },
            refresh: { _ in
                let (response, body) = try await transport.send(token, body: .bytes([])).headAndBody
                guard response.status == .ok else { throw RefreshRejected(status: response.status.code) }
                return String(decoding: body, as: UTF8.self)
            }
        )
    }
}

struct RefreshRejected: Error {
    var status: Int
}
