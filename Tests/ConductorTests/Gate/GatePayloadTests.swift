import Conductor
import ConductorTestKit
import Foundation
import HTTPTypes
import Testing

/// What a request carries and where it goes: bodies from any collection of bytes, requests that
/// name only a path (``GateConfiguration/baseURL``), and the origin a response reports.
@Suite struct GatePayloadTests {
    /// Answers every request with its own URL and, as a transport that followed redirects
    /// would, a scripted origin; keeps what it was sent.
    final class Echo: GateTransport {
        struct Sent {
            var request: HTTPRequest
            var body: GateRequestBody?
        }

        let origin: (url: URL?, redirects: [GateRedirect]?)
        let sent = Lock<[Sent]>([])

        init(url: URL? = nil, redirects: [GateRedirect]? = nil) { origin = (url, redirects) }

        func send(_ request: HTTPRequest, body: GateRequestBody?) async throws -> GateTransportResponse {
            sent.withLock { $0.append(Sent(request: request, body: body)) }
            let bytes = await body?.collect() ?? []
            return GateTransportResponse(
                response: HTTPResponse(status: .ok), body: bytes, url: origin.url, redirects: origin.redirects)
        }

        var requests: [HTTPRequest] { sent.withLock { $0.map(\.request) } }
    }

    static func gate(
        _ transport: some GateTransport, baseURL: URL? = nil, cache: (any ResponseCache)? = nil
    ) throws -> RequestGate<String> {
        var configuration = GateConfiguration(jitterSeed: 1)
        configuration.baseURL = baseURL
        return try RequestGate(
            transport: transport, credential: "t0", configuration: configuration, cache: cache, clock: ManualClock(),
            authorize: { request, token in request.headerFields[.authorization] = "Bearer \(token)" },
            refresh: { _ in "t1" })
    }

    static func path(_ path: String?, method: HTTPRequest.Method = .get) -> HTTPRequest {
        HTTPRequest(method: method, scheme: nil, authority: nil, path: path)
    }

    // MARK: - Bodies

    /// Any collection of bytes makes a body that can be sent again; an `[UInt8]` is kept as it
    /// is, and so is any other collection, which ``GateRequestBody/contents`` hands back as given.
    @Test func aBodyIsMadeFromAnyCollectionOfBytes() async throws {
        let array: [UInt8] = [1, 2, 3]
        let fromArray = GateRequestBody.bytes(array)
        #expect(fromArray.isReplayable && fromArray.contents is [UInt8])
        #expect(await fromArray.collect() == array)

        let data = GateRequestBody.bytes(Data([4, 5]))
        #expect(data.isReplayable && data.contents is Data)
        #expect(await data.collect() == [4, 5])

        let text = GateRequestBody.bytes("hé".utf8)
        #expect(text.contents is String.UTF8View)
        #expect(await text.collect() == Array("hé".utf8))
        var chunks: [[UInt8]] = []
        for await chunk in text.chunks { chunks.append(chunk) }
        #expect(chunks == [Array("hé".utf8)])

        let slice = GateRequestBody.bytes(array[1...])
        #expect(await slice.collect() == [2, 3])

        let (stream, continuation) = AsyncStream<[UInt8]>.makeStream()
        continuation.yield([9])
        continuation.finish()
        let streamed = GateRequestBody.stream(stream)
        #expect(!streamed.isReplayable && streamed.contents == nil)
        #expect(await streamed.collect() == [9])
    }

    /// A body made of `Data` reaches the transport as `Data`, and is sent again on a retry.
    @Test func aDataBodyIsRetried() async throws {
        final class FailsOnce: GateTransport {
            let inner = Echo()
            let failed = Lock(false)
            func send(_ request: HTTPRequest, body: GateRequestBody?) async throws -> GateTransportResponse {
                let reply = try await inner.send(request, body: body)
                let first = failed.withLock { failed in
                    defer { failed = true }
                    return !failed
                }
                if first {
                    return GateTransportResponse(response: HTTPResponse(status: .serviceUnavailable), body: [])
                }
                return reply
            }
        }
        let transport = FailsOnce()
        var configuration = GateConfiguration(
            retry: .automatic(.attempts(3, backoff: .zero, maxBackoff: .zero)), jitterSeed: 1)
        configuration.refreshWindow = nil
        let gate = try RequestGate<String>(
            transport: transport, credential: "t0", configuration: configuration,
            authorize: { _, _ in }, refresh: { _ in "t1" })
        let put = HTTPRequest(method: .put, scheme: "https", authority: "example.test", path: "/doc")
        let reply = try await gate.send(put, body: .bytes(Data("doc".utf8)))
        #expect(reply.body == Array("doc".utf8))
        let bodies = transport.inner.sent.withLock { $0.map(\.body) }
        #expect(bodies.count == 2)
        #expect(bodies.allSatisfy { $0?.contents is Data })
    }

    // MARK: - Base URL

    /// A request that names only a path goes to the base URL, its path after the base's path;
    /// one that names its scheme and authority goes where it says. Errors name the request as
    /// the caller wrote it.
    @Test func aPathOnlyRequestIsResolvedAgainstTheBaseURL() async throws {
        let transport = Echo()
        let gate = try Self.gate(transport, baseURL: URL(string: "https://api.example.test:8443/v1/"))
        _ = try await gate.send(Self.path("/feed?page=2"))
        _ = try await gate.send(Self.path("items"))
        _ = try await gate.send(Self.path(nil))
        _ = try await gate.send(HTTPRequest(method: .get, scheme: "http", authority: "other.test", path: "/x"))
        let sent = transport.requests
        #expect(sent.map(\.scheme) == ["https", "https", "https", "http"])
        #expect(
            sent.map(\.authority) == [
                "api.example.test:8443", "api.example.test:8443", "api.example.test:8443", "other.test",
            ])
        #expect(sent.map(\.path) == ["/v1/feed?page=2", "/v1/items", "/v1", "/x"])
        // The credential is still added to a resolved request.
        #expect(sent.allSatisfy { $0.headerFields[.authorization] == "Bearer t0" })
    }

    /// A base URL with no path adds none.
    @Test func aBaseURLWithoutAPathAddsNone() async throws {
        let transport = Echo()
        let gate = try Self.gate(transport, baseURL: URL(string: "http://127.0.0.1:8080"))
        _ = try await gate.send(Self.path("/feed"))
        _ = try await gate.send(Self.path(nil))
        #expect(transport.requests.map(\.path) == ["/feed", "/"])
        #expect(transport.requests.map(\.authority) == ["127.0.0.1:8080", "127.0.0.1:8080"])
    }

    /// Without a base URL, a request with no scheme and no authority is not sent; a request that
    /// names only one of the two is not sent even with one. The error names the request.
    @Test func aRequestWithoutAURLFailsNamingIt() async throws {
        let transport = Echo()
        let gate = try Self.gate(transport)
        let none = await #expect(throws: GateError.self) { try await gate.send(Self.path("/feed?page=2")) }
        #expect(none?.code == .incompleteURL)
        #expect(none?.request == "GET /feed")
        #expect(
            none?.message == "GET /feed has no URL: it lacks a scheme and an authority, and the gate has no "
                + "GateConfiguration.baseURL to take them from")

        let based = try Self.gate(transport, baseURL: URL(string: "https://api.example.test"))
        let half = HTTPRequest(method: .post, scheme: nil, authority: "other.test", path: "/upload")
        let partial = await #expect(throws: GateError.self) { try await based.send(half) }
        #expect(partial?.code == .incompleteURL)
        #expect(
            partial?.message == "POST /upload has no URL: it lacks a scheme, and a request names both, or neither "
                + "and takes them from GateConfiguration.baseURL")
        #expect(transport.requests.isEmpty, "nothing was sent")
    }

    /// A URL that cannot be a base is refused when the gate is made, naming the setting.
    @Test(arguments: ["https://api.example.test/v1?key=1", "https://api.example.test/#top", "/v1/relative"])
    func aBaseURLThatCannotBeABaseIsRefused(url: String) throws {
        let error = #expect(throws: GateError.self) { try Self.gate(Echo(), baseURL: URL(string: url)) }
        #expect(error?.code == .invalidConfiguration)
        #expect(error?.message.hasPrefix("GateConfiguration.baseURL is \"\(url)\"") == true, "\(error?.message ?? "")")
    }

    // MARK: - Where a response came from

    /// The gate's response carries the URL and redirects the transport reported; a transport
    /// that cannot tell leaves both `nil`.
    @Test func theResponseCarriesTheTransportsOrigin() async throws {
        let landed = URL(string: "https://example.test/new")!
        let hop = GateRedirect(url: URL(string: "https://example.test/old")!, status: .movedPermanently)
        let gate = try Self.gate(Echo(url: landed, redirects: [hop]))
        let reply = try await gate.send(
            HTTPRequest(method: .get, scheme: "https", authority: "example.test", path: "/old"))
        #expect(reply.url == landed && reply.redirects == [hop])

        let unknowing = try Self.gate(Echo())
        let other = try await unknowing.send(
            HTTPRequest(method: .get, scheme: "https", authority: "example.test", path: "/a"))
        #expect(other.url == nil && other.redirects == nil)
    }

    /// A response from the cache reports the URL and redirects of the response it stored.
    @Test func aCachedResponseReportsTheOriginItWasStoredWith() async throws {
        let landed = URL(string: "https://example.test/new")!
        let hop = GateRedirect(url: URL(string: "https://example.test/old")!, status: .found)
        let cache = MemoryCache()
        let request = HTTPRequest(method: .get, scheme: "https", authority: "example.test", path: "/old")
        _ = try await Self.gate(Echo(url: landed, redirects: [hop]), cache: cache).send(request)

        let offline = MemoryTransport(validToken: "t0")
        offline.state.withLock { $0.failuresToThrow = 10 }
        var configuration = GateConfiguration(retry: .automatic(.attempts(1)), jitterSeed: 1)
        configuration.refreshWindow = nil
        let gate = try RequestGate<String>(
            transport: offline, credential: "t0", configuration: configuration, cache: cache,
            authorize: { _, _ in }, refresh: { _ in "t1" })
        let reply = try await gate.send(request)
        #expect(reply.isFromCache)
        #expect(reply.url == landed && reply.redirects == [hop])
    }
}
