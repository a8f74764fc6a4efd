import Conductor
import ConductorURLSession
import Foundation
import HTTPTypes
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite struct URLSessionTransportTests {
    /// Timeouts, lost or refused connections and no network are worth another attempt; a bad
    /// URL, an unsupported scheme, a certificate the client rejects and a cancelled request are
    /// not, and neither is an error that is not a `URLError`.
    @Test func urlErrorsAreClassifiedTransientOrPermanent() {
        let transport = URLSessionTransport()
        let transient: [URLError.Code] = [
            .timedOut, .networkConnectionLost, .notConnectedToInternet, .cannotConnectToHost, .cannotFindHost,
            .dnsLookupFailed, .badServerResponse, .unknown,
        ]
        for code in transient { #expect(transport.classify(URLError(code)) == .transient, "\(code)") }
        let permanent: [URLError.Code] = [
            .badURL, .unsupportedURL, .secureConnectionFailed, .serverCertificateUntrusted, .cancelled,
        ]
        for code in permanent { #expect(transport.classify(URLError(code)) == .permanent, "\(code)") }
        struct Other: Error {}
        #expect(transport.classify(Other()) == .permanent)
    }

    /// A server that drops every connection after the response head: a GET is retried through
    /// its whole budget (on Linux the drop is an unknown `URLError`, which a first version called
    /// permanent, ending the GET after one attempt). Not retrying a POST is tested in memory.
    @Test func aDroppedConnectionIsRetriedThroughTheBudget() async throws {
        let server = try await TokenServer.start(faults: .init(seed: 1, drop: 1.0))
        var configuration = GateConfiguration(maxAttempts: 4, initialBackoff: .zero, maxBackoff: .zero)
        configuration.refreshWindow = nil
        let (gate, finish) = try server.gate(configuration)
        defer { finish() }
        let get = HTTPRequest(method: .get, scheme: "http", authority: server.authority, path: "/data/get")
        let getError = await #expect(throws: GateError.self) { try await gate.send(get) }
        #expect(getError?.code == .transport)
        #expect(getError?.message.contains("not retried") == false, "\(getError?.message ?? "")")
        let sends = gate.recordedEvents.reduce(into: [UInt64: Int]()) { counts, event in
            if case .running(let id, _, _) = event { counts[id, default: 0] += 1 }
        }
        #expect(sends[0] == 4, "every attempt of its budget")
        await server.stop()
    }

    /// A send whose task is cancelled before it starts throws `CancellationError` and makes no
    /// URL session task: nothing reaches the server (a task that never ran would also keep its
    /// completion handler, and the caller's state with it, in the session).
    @Test func aSendCancelledBeforeItStartsSendsNothing() async throws {
        let server = try await TokenServer.start()
        let transport = URLSessionTransport()
        let cancelled = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            let request = HTTPRequest(method: .get, scheme: "http", authority: server.authority, path: "/data/never")
            return try await transport.send(request, body: nil)
        }
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        // A send after it goes out, and is the only one the server saw.
        let after = HTTPRequest(method: .get, scheme: "http", authority: server.authority, path: "/data/after")
        _ = try await transport.send(after, body: nil)
        #expect(server.hits.map(\.path) == ["/data/after"])
        await server.stop()
    }

    /// Regression: cancelling a send while URLSession was completing it could deadlock the
    /// process (a synchronous `URLSessionTask.cancel()` inside the cancellation handler).
    /// Many sends held on the server are cancelled at once, some as the server lets them go;
    /// every one must return.
    @Test func cancellingSendsInFlightNeverHangs() async throws {
        let server = try await TokenServer.start()
        let transport = URLSessionTransport()
        for round in 0..<StressConfiguration.iterations(default: 5) {
            server.startHolding()
            let sends = (0..<20).map { index in
                Task {
                    let request = HTTPRequest(
                        method: .get, scheme: "http", authority: server.authority, path: "/data/held-\(round)-\(index)")
                    return try await transport.send(request, body: nil)
                }
            }
            await server.held(atLeast: 4)  // URLSession opens at most 6 connections per host
            for (index, send) in sends.enumerated() where index % 2 == 0 { send.cancel() }
            server.releaseHeld()
            for (index, send) in sends.enumerated() {
                let result = await send.result
                if index % 2 == 1 {
                    #expect((try? result.get()) != nil, "round \(round): send \(index) failed")
                } else {
                    #expect(throws: CancellationError.self, "round \(round): send \(index)") { try result.get() }
                }
            }
        }
        await server.stop()
    }
}
