import AsyncHTTPClient
import Conductor
import ConductorAsyncHTTPClient
import ConductorTestKit
import Foundation
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOPosix
import Testing

/// The transport on its own against a real loopback server: cancellation, deadlines, body
/// limits and classification. Nothing here sleeps: a slow server waits for a latch.
@Suite(.timeLimit(.minutes(1)))
struct AsyncHTTPClientTransportTests {
    // MARK: - Configuration and requests

    @Test func outOfRangeSettingsAreRefused() async throws {
        try await withClient { client in
            let negative = #expect(throws: AsyncHTTPClientTransportError.self) {
                try AsyncHTTPClientTransport(client: client, maxResponseBytes: -1)
            }
            #expect(negative?.code == .invalidConfiguration)
            #expect(negative?.message.contains("maxResponseBytes is -1") == true, "\(negative?.message ?? "")")
            let zero = #expect(throws: AsyncHTTPClientTransportError.self) {
                try AsyncHTTPClientTransport(client: client, maxResponseBytes: 1, attemptTimeout: .zero)
            }
            #expect(zero?.code == .invalidConfiguration)
        }
    }

    @Test func aRequestWithoutAnAuthorityIsRefusedAndNamed() async throws {
        try await withClient { client in
            let transport = try AsyncHTTPClientTransport(client: client, maxResponseBytes: 100)
            let request = HTTPRequest(method: .get, scheme: "http", authority: nil, path: "/feed?secret=1")
            let error = await #expect(throws: AsyncHTTPClientTransportError.self) {
                try await transport.send(request, body: nil)
            }
            #expect(error?.code == .invalidRequest)
            #expect(error?.message.hasPrefix("GET /feed cannot be sent") == true, "\(error?.message ?? "")")
            #expect(transport.classify(try #require(error)) == .permanent)
        }
    }

    @Test func aBodyMadeOfBytesAndAStreamedBodyBothArrive() async throws {
        let server = try await FaultServer.start()
        try await withClient { client in
            let transport = try AsyncHTTPClientTransport(client: client, maxResponseBytes: 100)
            let echo = server.request("/echo", method: .post)
            let (response, body) = try await transport.send(echo, body: .bytes([1, 2, 3])).headAndBody
            #expect(response.status == .ok && body == [1, 2, 3])
            let (chunks, continuation) = AsyncStream<[UInt8]>.makeStream()
            continuation.yield([4, 5])
            continuation.yield([6])
            continuation.finish()
            let (streamed, echoed) = try await transport.send(echo, body: .stream(chunks)).headAndBody
            #expect(streamed.status == .ok && echoed == [4, 5, 6])
        }
        await server.stop()
    }

    /// A streamed body goes out as it is read: the request's head, chunked, reaches the server
    /// while the body's stream is still open (a transport that collected the body first would
    /// send nothing until the stream ended, and this test would wait forever).
    @Test func aStreamedBodyIsSentAsItIsRead() async throws {
        let recorder = try await WireRecorder.start()
        try await withClient { client in
            let transport = try AsyncHTTPClientTransport(client: client, maxResponseBytes: 100)
            var upload = HTTPRequest(method: .post, scheme: "http", authority: recorder.authority, path: "/upload")
            upload.headerFields[.contentType] = "application/octet-stream"
            let (chunks, continuation) = AsyncStream<[UInt8]>.makeStream()
            continuation.yield([1, 2, 3])
            let send = Task { try await transport.send(upload, body: .stream(chunks)) }
            var arrivals = recorder.arrivals.makeAsyncIterator()
            let head = try #require(await arrivals.next())
            #expect(head.hasPrefix("POST /upload"))
            #expect(WireRecorder.values(of: "transfer-encoding", in: head) == ["chunked"])
            #expect(WireRecorder.values(of: "content-length", in: head).isEmpty)
            continuation.finish()
            // The recorder answered as soon as the head arrived; how the client ends an upload
            // answered early is its own business.
            _ = try? await send.value
        }
        try await recorder.stop()
    }

    // MARK: - Cancellation

    /// Cancelled before it starts, a send throws `CancellationError` and nothing reaches the
    /// server; the next send goes out as usual.
    @Test func aSendCancelledBeforeItStartsSendsNothing() async throws {
        let server = try await FaultServer.start()
        try await withClient { client in
            let transport = try AsyncHTTPClientTransport(client: client, maxResponseBytes: 100)
            let never = server.request("/public/never")
            let cancelled = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await transport.send(never, body: nil)
            }
            await #expect(throws: CancellationError.self) { try await cancelled.value }
            _ = try await transport.send(server.request("/public/after"), body: nil)
            #expect(server.hits.map(\.path) == ["/public/after"])
        }
        await server.stop()
    }

    /// The server holds the response; the caller cancels: the send returns with
    /// `CancellationError` while the server still holds it (it is released only afterwards),
    /// so the request was really abandoned, not waited out.
    @Test func cancellingASendWaitingForItsResponseReturnsAtOnce() async throws {
        let server = try await FaultServer.start()
        try await withClient { client in
            let transport = try AsyncHTTPClientTransport(client: client, maxResponseBytes: 100)
            let held = server.request("/data/held-1")
            let send = Task { try await transport.send(held, body: nil) }
            await server.held(atLeast: 1)
            send.cancel()
            await #expect(throws: CancellationError.self) { try await send.value }
            #expect(!server.release.isOpen)
            server.release.open()
            // The client is still usable: a new connection, or one back from the pool.
            let (response, _) = try await transport.send(server.request("/public/after"), body: nil).headAndBody
            #expect(response.status == .ok)
        }
        await server.stop()
    }

    /// The body's first chunk is out and the rest is held: cancelling returns
    /// `CancellationError` (not a truncated body) before the server lets the rest go.
    @Test func cancellingASendMidBodyReturnsAtOnce() async throws {
        let server = try await FaultServer.start()
        try await withClient { client in
            let transport = try AsyncHTTPClientTransport(client: client, maxResponseBytes: 100)
            let dribble = server.request("/dribble/1")
            let send = Task { try await transport.send(dribble, body: nil) }
            await server.firstChunkSent.wait()
            send.cancel()
            await #expect(throws: CancellationError.self) { try await send.value }
            #expect(!server.release.isOpen)
            server.release.open()
            let (response, _) = try await transport.send(server.request("/public/after"), body: nil).headAndBody
            #expect(response.status == .ok)
        }
        await server.stop()
    }

    // MARK: - Deadlines

    /// The attempt's deadline is AsyncHTTPClient's: a response the server holds ends in
    /// `deadlineExceeded`, which is transient. The server never answers, so the deadline is
    /// the only way out: the outcome does not depend on timing.
    @Test func theAttemptDeadlineEndsAHeldResponse() async throws {
        let server = try await FaultServer.start()
        try await withClient { client in
            let transport = try AsyncHTTPClientTransport(
                client: client, maxResponseBytes: 100, attemptTimeout: .milliseconds(200))
            let error = await #expect(throws: HTTPClientError.self) {
                try await transport.send(server.request("/data/held-1"), body: nil)
            }
            #expect(error == .deadlineExceeded)
            #expect(transport.classify(try #require(error)) == .transient)
        }
        await server.stop()
    }

    /// The deadline bounds the body too (AsyncHTTPClient's own ends with the head): a body
    /// whose rest the server holds ends in `deadlineExceeded`. (On a loaded machine the head
    /// itself may miss the deadline; the outcome is the same.)
    @Test func theAttemptDeadlineEndsAHeldBody() async throws {
        let server = try await FaultServer.start()
        try await withClient { client in
            let transport = try AsyncHTTPClientTransport(
                client: client, maxResponseBytes: 100, attemptTimeout: .milliseconds(200))
            let error = await #expect(throws: HTTPClientError.self) {
                try await transport.send(server.request("/dribble/1"), body: nil)
            }
            #expect(error == .deadlineExceeded)
        }
        await server.stop()
    }

    // MARK: - Response size

    /// A `Content-Length` over the limit ends the send before its body is read; a chunked body
    /// ends at the chunk that would pass the limit. A body exactly at the limit arrives whole.
    @Test func aResponseBodyOverTheLimitIsATypedPermanentError() async throws {
        let server = try await FaultServer.start()
        try await withClient { client in
            let transport = try AsyncHTTPClientTransport(client: client, maxResponseBytes: 2500)
            let declared = await #expect(throws: AsyncHTTPClientTransportError.self) {
                try await transport.send(server.request("/large/2501"), body: nil)
            }
            #expect(declared?.code == .responseTooLarge)
            #expect(
                declared?.message == "GET /large/2501: the response body is larger than the limit of 2500 bytes "
                    + "(its Content-Length is 2501 bytes); raise maxResponseBytes to accept it")
            #expect(transport.classify(try #require(declared)) == .permanent)

            let streamed = await #expect(throws: AsyncHTTPClientTransportError.self) {
                try await transport.send(server.request("/chunked/2501"), body: nil)
            }
            #expect(streamed?.code == .responseTooLarge)
            #expect(streamed?.message.contains("more bytes arrived") == true, "\(streamed?.message ?? "")")

            #expect(try await transport.send(server.request("/large/2500"), body: nil).body.count == 2500)
            #expect(try await transport.send(server.request("/chunked/2500"), body: nil).body.count == 2500)
        }
        await server.stop()
    }

    /// The limit is on bytes that can arrive: a response to a HEAD, a 204 and a 304 carry no
    /// body, so their `Content-Length` — over the limit here — is no reason to refuse them. A
    /// GET of the same length after each is still refused: the limit still holds.
    @Test(arguments: [
        ("/large/5000", true, 200), ("/bodiless/204/5000", false, 204), ("/bodiless/304/5000", false, 304),
    ])
    func aResponseWithoutABodyIsAcceptedWhateverItsContentLength(path: String, isHead: Bool, status: Int) async throws {
        let server = try await FaultServer.start()
        try await withClient { client in
            let transport = try AsyncHTTPClientTransport(client: client, maxResponseBytes: 100)
            let request = server.request(path, method: isHead ? .head : .get)
            let (response, body) = try await transport.send(request, body: nil).headAndBody
            #expect(response.status.code == status && body.isEmpty)
            #expect(response.headerFields[.contentLength] == "5000")
            let declared = await #expect(throws: AsyncHTTPClientTransportError.self) {
                try await transport.send(server.request("/large/5000"), body: nil)
            }
            #expect(declared?.code == .responseTooLarge)
        }
        await server.stop()
    }

    // MARK: - Classification

    /// A connection the server closes after the response head is transient, whatever error
    /// reports it.
    @Test func aConnectionDroppedAfterTheHeadIsTransient() async throws {
        let server = try await FaultServer.start()
        try await withClient { client in
            let transport = try AsyncHTTPClientTransport(client: client, maxResponseBytes: 100)
            do {
                _ = try await transport.send(server.request("/drop/1"), body: nil)
                Issue.record("the dropped response arrived")
            } catch {
                #expect(transport.classify(error) == .transient, "\(type(of: error)): \(error)")
            }
        }
        await server.stop()
    }

    /// A refused connection (nothing listens on the port) fails the send at once, with the
    /// client set up as the docs say, with SwiftNIO's error naming it; it is transient.
    @Test func aRefusedConnectionIsTransient() async throws {
        let authority = try await closedPortAuthority()
        try await withClient { client in
            let transport = try AsyncHTTPClientTransport(client: client, maxResponseBytes: 100)
            let request = HTTPRequest(method: .get, scheme: "http", authority: authority, path: "/down")
            do {
                _ = try await transport.send(request, body: nil)
                Issue.record("a closed port answered")
            } catch {
                #expect(isARefusedConnection(error), "\(type(of: error)): \(error)")
                #expect(transport.classify(error) == .transient, "\(type(of: error)): \(error)")
            }
        }
    }

    @Test func errorsAreClassifiedTransientOrPermanent() async throws {
        try await withClient { client in
            let transport = try AsyncHTTPClientTransport(client: client, maxResponseBytes: 100)
            let transient: [any Error] = [
                HTTPClientError.readTimeout, HTTPClientError.writeTimeout, HTTPClientError.connectTimeout,
                HTTPClientError.tlsHandshakeTimeout, HTTPClientError.getConnectionFromPoolTimeout,
                HTTPClientError.deadlineExceeded, HTTPClientError.remoteConnectionClosed,
                HTTPClientError.uncleanShutdown, IOError(errnoCode: ECONNRESET, reason: "read"),
                IOError(errnoCode: EPIPE, reason: "write"), IOError(errnoCode: ECONNREFUSED, reason: "connect"),
                IOError(errnoCode: ETIMEDOUT, reason: "read"), IOError(errnoCode: EMFILE, reason: "socket"),
                ChannelError.ioOnClosedChannel,
                ChannelError.eof, ChannelError.connectTimeout(.seconds(1)), HTTPParserError.invalidEOFState,
            ]
            for error in transient { #expect(transport.classify(error) == .transient, "\(error)") }
            struct Other: Error {}
            let permanent: [any Error] = [
                HTTPClientError.invalidURL, HTTPClientError.emptyHost, HTTPClientError.unsupportedScheme("ftp"),
                HTTPClientError.alreadyShutdown, HTTPClientError.cancelled, HTTPClientError.redirectCycleDetected,
                HTTPClientError.redirectLimitReached, HTTPClientError.invalidHeaderFieldNames(["a b"]),
                ChannelError.operationUnsupported, HTTPParserError.invalidStatus, CancellationError(), Other(),
                // An errno that says something another attempt would meet again.
                IOError(errnoCode: EINVAL, reason: "setsockopt"), IOError(errnoCode: EBADF, reason: "read"),
                IOError(errnoCode: EACCES, reason: "connect"),
            ]
            for error in permanent { #expect(transport.classify(error) == .permanent, "\(error)") }
        }
    }

    // MARK: - Bodies and where a response came from

    /// A body made of a `ByteBuffer` arrives whole, and is kept as the buffer's view (so the
    /// transport sends it without a copy); so does one made of `Data`.
    @Test func aByteBufferBodyArrives() async throws {
        let server = try await FaultServer.start()
        try await withClient { client in
            let transport = try AsyncHTTPClientTransport(client: client, maxResponseBytes: 100)
            let echo = server.request("/echo", method: .post)
            var buffer = ByteBuffer()
            buffer.writeString("skipped")
            buffer.moveReaderIndex(forwardBy: 7)
            buffer.writeBytes([7, 8, 9])
            let body = GateRequestBody.bytes(buffer)
            #expect(body.contents is ByteBufferView && body.isReplayable)
            #expect(try await transport.send(echo, body: body).body == [7, 8, 9], "only the readable bytes")
            #expect(try await transport.send(echo, body: .bytes(Data([1, 2]))).body == [1, 2])
            let reply = try await transport.send(echo, body: .bytes("abc".utf8))
            #expect(GateResponse(response: reply.response, body: reply.body).bodyBuffer == ByteBuffer(string: "abc"))
        }
        await server.stop()
    }

    /// A 302 to a 307 to a 200: the response names the URL that answered and each redirect on
    /// the way, oldest first (from AsyncHTTPClient's history); a response reached directly lists
    /// none.
    @Test func aRedirectChainReportsTheFinalURLAndEachRedirect() async throws {
        let server = try await FaultServer.start()
        try await withClient { client in
            let transport = try AsyncHTTPClientTransport(client: client, maxResponseBytes: 100)
            let base = "http://\(server.authority)"
            let reply = try await transport.send(server.request("/moved/302-307"), body: nil)
            #expect(reply.response.status == .ok && reply.body == Array("/public/landed".utf8))
            #expect(reply.url?.absoluteString == "\(base)/public/landed")
            #expect(reply.redirects?.map(\.url.absoluteString) == ["\(base)/moved/302-307", "\(base)/moved/307"])
            #expect(reply.redirects?.map(\.status) == [.found, .temporaryRedirect])

            let straight = try await transport.send(server.request("/public/direct"), body: nil)
            #expect(straight.url?.absoluteString == "\(base)/public/direct" && straight.redirects == [])
        }
        await server.stop()
    }
}
