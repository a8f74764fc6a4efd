public import AsyncHTTPClient
public import ConductorGate
import Foundation
public import HTTPTypes
import Instrumentation
import NIOCore
import NIOHTTP1
import Tracing

/// Sends a ``RequestGate``'s requests with AsyncHTTPClient: the transport for servers, and the
/// one on Linux that really cancels a request.
///
/// ```swift
/// var configuration = HTTPClient.Configuration()
/// configuration.tracing.tracer = nil  // the gate's span is the request's client span
/// configuration.connectionPool.retryConnectionEstablishment = false  // the gate retries
/// let client = HTTPClient(configuration: configuration)  // on AsyncHTTPClient's shared event loops
/// // … and once the gate is shut down: `try await client.shutdown()` — the client is yours
///
/// let gate = try RequestGate<String>(
///     transport: try AsyncHTTPClientTransport(client: client, maxResponseBytes: 1 << 20),
///     authorize: { request, token in request.headerFields[.authorization] = "Bearer \(token)" },
///     refresh: { _ in try await auth.fetchToken() }
/// )
/// ```
///
/// - The client is the caller's: the transport keeps no client of its own and never shuts
///   one down. Shut the client down after the last send has returned (after the gate is shut
///   down), as AsyncHTTPClient requires.
/// - Cancelling the sending task cancels the HTTP request, before or after its response head:
///   the send throws `CancellationError` at once, and AsyncHTTPClient closes the connection
///   (or never opens one).
/// - `attemptTimeout` is AsyncHTTPClient's deadline for one attempt, and also bounds reading
///   the body; past it the send throws `HTTPClientError.deadlineExceeded`, which is transient.
///   The gate's own `requestTimeout` bounds the whole request across attempts.
/// - Set the client's `connectionPool.retryConnectionEstablishment` to `false`, as above. By
///   default AsyncHTTPClient keeps trying to open a connection that was refused until the
///   attempt's deadline (or its connect timeout), so an attempt to a server that is down
///   takes its whole deadline and its cause may be lost; with `false` the attempt fails at
///   once with SwiftNIO's error for it ("Connection refused"), which is transient, and the
///   gate tries again after its backoff, within the request's budget and deadline.
/// - The response body is read up to `maxResponseBytes`: a larger one ends the send with
///   ``AsyncHTTPClientTransportError/Code/responseTooLarge`` (permanent) — at once when its
///   `Content-Length` says so, otherwise as soon as a chunk would pass the limit, which is
///   not kept (only the chunk AsyncHTTPClient hands over is in memory) — and the connection
///   is closed. The limit is on bytes that can arrive: a response to a HEAD, and a 204 or
///   304, has no body, and its `Content-Length` (the size of a body it does not carry) is
///   not held against the limit.
/// - A ``GateRequestBody`` made of bytes is sent with its length — a `ByteBuffer` one
///   (`.bytes(buffer)`) as it is, without a copy; a streamed one is
///   sent chunk by chunk as it is read (chunked transfer encoding), never held in memory whole.
/// - The response says where it came from: ``GateTransportResponse/url`` is the URL that
///   answered, ``GateTransportResponse/redirects`` each redirect the client followed (its
///   `redirectConfiguration` decides which), from the response's `history`.
/// - Trace context: the gate writes the request span's `traceparent` into the request. An
///   `HTTPClient` whose configuration has a tracer (AsyncHTTPClient's default is the
///   bootstrapped one) starts a span of its own for each attempt and writes its own
///   `traceparent` too: then the transport removes the gate's fields so the request carries
///   one, the client's span — a child of the gate's. Set `configuration.tracing.tracer = nil`
///   for one client span per request.
///
/// Its errors are AsyncHTTPClient's, SwiftNIO's and ``AsyncHTTPClientTransportError``;
/// ``classify(_:)`` names which are worth another attempt.
public struct AsyncHTTPClientTransport: GateTransport {
    private let client: HTTPClient
    private let maxResponseBytes: Int
    private let attemptTimeout: Duration?

    /// Sends through `client`.
    ///
    /// - Parameters:
    ///   - client: The client, owned and shut down by the caller.
    ///   - maxResponseBytes: The largest response body accepted, in bytes (at least 0).
    ///   - attemptTimeout: How long one attempt may take, response body included; `nil` for no
    ///     limit of the transport's own (the gate's `requestTimeout` still applies). Positive.
    /// - Throws: ``AsyncHTTPClientTransportError/Code/invalidConfiguration`` for a negative
    ///   `maxResponseBytes` or a timeout that is not positive.
    public init(
        client: HTTPClient, maxResponseBytes: Int, attemptTimeout: Duration? = nil
    ) throws(AsyncHTTPClientTransportError) {
        guard maxResponseBytes >= 0 else {
            throw .invalidConfiguration("maxResponseBytes is \(maxResponseBytes); it must be 0 or more")
        }
        if let attemptTimeout, attemptTimeout <= .zero {
            throw .invalidConfiguration("attemptTimeout is \(attemptTimeout.shortDescription); it must be positive")
        }
        self.client = client
        self.maxResponseBytes = maxResponseBytes
        self.attemptTimeout = attemptTimeout
    }

    public func send(_ request: HTTPRequest, body: GateRequestBody?) async throws -> GateTransportResponse {
        var outgoing = try HTTPClientRequest(request)
        if let body { outgoing.body = Self.outgoing(body) }
        removeTraceFieldsTheClientWrites(from: &outgoing.headers)
        // Cancelled already: open nothing.
        try Task.checkCancellation()
        let deadline = attemptTimeout.map { NIODeadline.now() + TimeAmount.nanoseconds($0.nanosecondsUpToAYear) }
        let response = try await client.execute(outgoing, deadline: deadline ?? .distantFuture)
        let head = HTTPResponse(response)
        if Self.hasBody(responseTo: request.method, status: response.status.code),
            let length = response.headers.first(name: "content-length").flatMap(Int.init), length > maxResponseBytes
        {
            // The body stays unread: dropping it makes AsyncHTTPClient close the connection.
            throw AsyncHTTPClientTransportError.responseTooLarge(request, declared: length, limit: maxResponseBytes)
        }
        let bytes =
            if let deadline {
                try await collect(response.body, of: request, before: deadline)
            } else {
                try await collect(response.body, of: request)
            }
        return GateTransportResponse(
            response: head, body: bytes, url: response.url, redirects: Self.redirects(response))
    }

    // MARK: - The request body and the response's origin

    /// The body as AsyncHTTPClient sends it: bytes with their length (a `ByteBuffer`'s without
    /// a copy), or a stream sent as it is read, chunked: an upload is never held in memory whole.
    private static func outgoing(_ body: GateRequestBody) -> HTTPClientRequest.Body {
        switch body.contents {
        case let view as ByteBufferView: .bytes(ByteBuffer(view))
        case let bytes as [UInt8]: .bytes(bytes)
        case let bytes?: .bytes(ByteBuffer(bytes: bytes))
        case nil: .stream(body.chunks.map { ByteBuffer(bytes: $0) }, length: .unknown)
        }
    }

    /// The redirects the client followed: every entry of the history but the last, which is
    /// the request that was answered. `nil` for a response with no history, whose origin the
    /// client did not record.
    private static func redirects(_ response: HTTPClientResponse) -> [GateRedirect]? {
        guard !response.history.isEmpty else { return nil }
        return response.history.dropLast().compactMap { hop in
            URL(string: hop.request.url).map {
                GateRedirect(url: $0, status: .init(code: Int(hop.responseHead.status.code)))
            }
        }
    }

    // MARK: - The response body

    /// Whether a response can carry a body at all (RFC 9110, section 6.4.1): not one to a HEAD,
    /// and not a 1xx, 204 or 304, whatever their `Content-Length` says (AsyncHTTPClient reads
    /// none, so none can pass the limit).
    private static func hasBody(responseTo method: HTTPRequest.Method, status: UInt) -> Bool {
        method != .head && status >= 200 && status != 204 && status != 304
    }

    /// The body, chunk by chunk, refusing the chunk that would pass the limit before keeping
    /// any of it.
    private func collect(_ body: HTTPClientResponse.Body, of request: HTTPRequest) async throws -> [UInt8] {
        var bytes: [UInt8] = []
        for try await chunk in body {
            guard chunk.readableBytes <= maxResponseBytes - bytes.count else {
                throw AsyncHTTPClientTransportError.responseTooLarge(
                    request, declared: nil, limit: maxResponseBytes)
            }
            bytes.append(contentsOf: chunk.readableBytesView)
        }
        // A body stream ends early when its task is cancelled: that is no complete body.
        try Task.checkCancellation()
        return bytes
    }

    /// The body, or `HTTPClientError.deadlineExceeded` at `deadline` (AsyncHTTPClient's own
    /// deadline ends with the response head). The timer runs on the client's event loop, on
    /// the clock the client's deadline uses.
    private func collect(
        _ body: HTTPClientResponse.Body, of request: HTTPRequest, before deadline: NIODeadline
    ) async throws -> [UInt8] {
        let eventLoop = client.eventLoopGroup.any()
        let first = await withTaskGroup(of: Result<[UInt8], any Error>?.self) { group in
            group.addTask {
                do { return .success(try await collect(body, of: request)) } catch { return .failure(error) }
            }
            group.addTask {
                let timer = eventLoop.scheduleTask(deadline: deadline) {}
                // `nil` when the timer fired; a cancelled timer (the body came first) fails.
                return await withTaskCancellationHandler {
                    (try? await timer.futureResult.get()) == nil ? .failure(CancellationError()) : nil
                } onCancel: {
                    timer.cancel()
                }
            }
            defer { group.cancelAll() }
            return await group.next() ?? nil
        }
        if Task.isCancelled { throw CancellationError() }
        guard let first else { throw HTTPClientError.deadlineExceeded }
        return try first.get()
    }

    // MARK: - Trace context

    /// A client that traces writes the trace fields of its own span (with `add`, so a field the
    /// gate wrote would go out twice): the gate's fields step aside, and the client's span,
    /// a child of the gate's, is the one the server continues.
    private func removeTraceFieldsTheClientWrites(from headers: inout HTTPHeaders) {
        guard let tracer = client.tracer, !(tracer is NoOpTracer), let context = ServiceContext.current else {
            return
        }
        var written = HTTPFields()
        tracer.inject(context, into: &written, using: HTTPFieldsInjector())
        for field in written { headers.remove(name: field.name.rawName) }
    }
}

extension Duration {
    /// Whole nanoseconds, at most a year's: a longer timeout is no timeout in practice, and
    /// keeps `NIODeadline` arithmetic far from overflowing.
    fileprivate var nanosecondsUpToAYear: Int64 {
        let year: Int64 = 365 * 24 * 3600
        let (seconds, attoseconds) = components
        guard seconds < year else { return year * 1_000_000_000 }
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
