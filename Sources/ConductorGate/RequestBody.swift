/// The body of a request sent through a ``RequestGate``.
///
/// A body made of bytes can be sent again, so the request can be retried; a streamed body
/// can be sent only once, so the gate never retries a request that carries one.
///
/// ```swift
/// try await gate.send(upload, body: .bytes(Array(json.utf8)))        // retried when needed
/// try await gate.send(upload, body: .stream(chunks))                  // never retried
/// ```
public struct RequestBody: Sendable {
    private enum Storage: Sendable {
        case bytes([UInt8])
        case stream(AsyncStream<[UInt8]>)
    }

    private let storage: Storage

    /// A body that can be sent any number of times.
    public static func bytes(_ bytes: [UInt8]) -> RequestBody { RequestBody(storage: .bytes(bytes)) }

    /// A body that can be sent only once.
    public static func stream(_ chunks: AsyncStream<[UInt8]>) -> RequestBody { RequestBody(storage: .stream(chunks)) }

    /// Whether the body can be sent again, and so whether the request may be retried.
    public var isReplayable: Bool {
        if case .bytes = storage { return true }
        return false
    }

    /// The body as a sequence of chunks, for a transport that sends it as it is read: a body
    /// made of bytes is one chunk; a streamed body is its own stream, which can be read once.
    ///
    /// ```swift
    /// if body.isReplayable {
    ///     send(await body.collect())            // the length is known
    /// } else {
    ///     for await chunk in body.chunks { write(chunk) }
    /// }
    /// ```
    public var chunks: AsyncStream<[UInt8]> {
        switch storage {
        case .bytes(let bytes):
            let (stream, continuation) = AsyncStream<[UInt8]>.makeStream()
            continuation.yield(bytes)
            continuation.finish()
            return stream
        case .stream(let chunks):
            return chunks
        }
    }

    /// The whole body; for a stream, reads it to the end (once).
    public func collect() async -> [UInt8] {
        switch storage {
        case .bytes(let bytes):
            return bytes
        case .stream(let chunks):
            var bytes: [UInt8] = []
            for await chunk in chunks { bytes += chunk }
            return bytes
        }
    }
}
