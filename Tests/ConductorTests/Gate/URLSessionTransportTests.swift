import Conductor
import ConductorTestKit
import ConductorURLSession
import Foundation
import HTTPTypes
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite struct URLSessionTransportTests {
    /// The codes another attempt may not see again — the 18 Alamofire retries, and on Linux
    /// `unknown` (FoundationNetworking's word for a connection dropped mid-response) — are
    /// transient; every other `URLError` code is permanent, and so is an error that is not a
    /// `URLError`. "Every other" is every code from -4000 to 0, which holds every code
    /// Foundation defines (-3007 to -995, and -1; on Apple's platforms any raw value is a code,
    /// named or not): a code the platform adds is permanent until it is known to pass.
    @Test func onlyURLErrorCodesKnownToPassAreTransient() {
        let transport = URLSessionTransport()
        var transient: Set<URLError.Code> = [
            .backgroundSessionInUseByAnotherProcess, .backgroundSessionWasDisconnected, .badServerResponse,
            .callIsActive, .cannotConnectToHost, .cannotFindHost, .cannotLoadFromNetwork, .dataNotAllowed,
            .dnsLookupFailed, .downloadDecodingFailedMidStream, .downloadDecodingFailedToComplete,
            .internationalRoamingOff, .networkConnectionLost, .notConnectedToInternet, .secureConnectionFailed,
            .serverCertificateHasBadDate, .serverCertificateNotYetValid, .timedOut,
        ]
        #expect(transient.count == 18)
        #if canImport(FoundationNetworking)
            transient.insert(.unknown)
        #endif
        var codes: Set<URLError.Code> = []
        for raw in -4000...0 {
            // Failable on Linux (`nil` for a raw value Foundation does not name), not on Apple's.
            let code: URLError.Code? = URLError.Code(rawValue: raw)
            guard let code else { continue }
            codes.insert(code)
            let expected: TransportFailure = transient.contains(code) ? .transient : .permanent
            #expect(transport.classify(URLError(code)) == expected, "URLError code \(raw)")
        }
        #expect(codes.isSuperset(of: transient), "every transient code is among those checked")
        #expect(codes.count >= 48, "FoundationNetworking names 48 codes, Apple's more; \(codes.count) checked")
        // Some of the permanent ones by name, the ones a first version retried among them.
        let permanent: [URLError.Code] = [
            .cancelled, .badURL, .unsupportedURL, .cannotDecodeContentData, .cannotDecodeRawData,
            .cannotParseResponse, .resourceUnavailable, .zeroByteResource, .requestBodyStreamExhausted,
            .fileDoesNotExist, .fileIsDirectory, .noPermissionsToReadFile, .cannotCreateFile, .cannotOpenFile,
            .cannotWriteToFile, .cannotMoveFile, .serverCertificateUntrusted, .serverCertificateHasUnknownRoot,
            .clientCertificateRejected, .userAuthenticationRequired, .httpTooManyRedirects,
            .dataLengthExceedsMaximum,
        ]
        for code in permanent { #expect(transport.classify(URLError(code)) == .permanent, "\(code)") }
        #if !canImport(FoundationNetworking)
            #expect(transport.classify(URLError(.unknown)) == .permanent)
        #endif
        struct Other: Error {}
        #expect(transport.classify(Other()) == .permanent)
        #expect(transport.classify(CancellationError()) == .permanent)
    }

    /// A server that drops every connection after the response head: a GET is retried through
    /// its whole budget (on Linux the drop is an unknown `URLError`, which a first version called
    /// permanent, ending the GET after one attempt). Not retrying a POST is tested in memory.
    ///
    /// The gate's clock is manual and never moved, so the request's deadline cannot pass
    /// however slow the machine is (with a real clock, a busy machine under the thread sanitizer
    /// once ended the request `timedOut` after three of its four sends): each attempt ends when
    /// the URL session sees the drop, or at the latest at the session's own timeout, which is
    /// transient too.
    @Test func aDroppedConnectionIsRetriedThroughTheBudget() async throws {
        let server = try await TokenServer.start(faults: .init(seed: 1, drop: 1.0))
        var configuration = GateConfiguration(retry: .automatic(.attempts(4, backoff: .zero, maxBackoff: .zero)))
        configuration.refreshWindow = nil
        let (gate, finish) = try server.gate(configuration, clock: ManualClock())
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

    // MARK: - Where a response came from

    /// A 302 to a 307 to a 200: the response names the URL that answered and each redirect on
    /// the way, oldest first; a response reached directly lists none. Through a gate with a base
    /// URL too, whose path-only request the session follows the same way.
    @Test func aRedirectChainReportsTheFinalURLAndEachRedirect() async throws {
        let server = try await TokenServer.start()
        let transport = URLSessionTransport()
        let base = "http://\(server.authority)"
        let chain = HTTPRequest(method: .get, scheme: "http", authority: server.authority, path: "/moved/302-307")
        let reply = try await transport.send(chain, body: nil)
        #expect(reply.response.status == .ok && reply.body == Array("/public/landed".utf8))
        #expect(reply.url?.absoluteString == "\(base)/public/landed")
        #expect(reply.redirects?.map(\.url.absoluteString) == ["\(base)/moved/302-307", "\(base)/moved/307"])
        #expect(reply.redirects?.map(\.status) == [.found, .temporaryRedirect])

        let direct = HTTPRequest(method: .get, scheme: "http", authority: server.authority, path: "/public/direct")
        let straight = try await transport.send(direct, body: nil)
        #expect(straight.url?.absoluteString == "\(base)/public/direct" && straight.redirects == [])

        var configuration = GateConfiguration()
        configuration.baseURL = URL(string: base)
        let gate = try RequestGate<String>(
            transport: transport, credential: "t0", configuration: configuration, authorize: { _, _ in },
            refresh: { _ in "t1" })
        defer { gate.shutdown() }
        let viaGate = try await gate.send(HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/moved/301"))
        #expect(viaGate.url?.absoluteString == "\(base)/public/landed")
        #expect(viaGate.redirects == [GateRedirect(url: URL(string: "\(base)/moved/301")!, status: .movedPermanently)])
        await server.stop()
    }

    /// The transport sees redirects through a task delegate, which must not hide the session's
    /// own: a session whose delegate refuses redirects gets the 302 back, and no redirect is
    /// listed.
    @Test func aSessionDelegateThatRefusesRedirectsIsStillHeard() async throws {
        final class Refusing: NSObject, URLSessionTaskDelegate, Sendable {
            func urlSession(
                _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
            ) {
                completionHandler(nil)
            }
        }
        let server = try await TokenServer.start()
        let session = URLSession(configuration: .ephemeral, delegate: Refusing(), delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        let transport = URLSessionTransport(session: session)
        let chain = HTTPRequest(method: .get, scheme: "http", authority: server.authority, path: "/moved/302")
        let reply = try await transport.send(chain, body: nil)
        #expect(reply.response.status == .found)
        #expect(reply.url?.absoluteString == "http://\(server.authority)/moved/302")
        #expect(reply.redirects == [])
        #expect(server.publicHits.isEmpty, "the redirect was not followed")
        await server.stop()
    }
}
