/// The body of a request sent through a ``RequestGate``.
///
/// A body made of bytes can be sent again, so the request can be retried; a streamed body
/// can be sent only once, so the gate never retries a request that carries one.
///
/// ```swift
/// try await gate.send(upload, body: .bytes(json.utf8))        // any collection of bytes; retried when needed
/// try await gate.send(upload, body: .bytes(data))             // `Data`, `[UInt8]`, a slice…
/// try await gate.send(upload, body: .stream(chunks))          // never retried
/// ```
///
/// The bytes are kept as they were given, not copied into an array: a transport that can send
/// their type as it is (``contents``) does; ``collect()`` copies only what is not an
/// `[UInt8]` already. `ConductorAsyncHTTPClient` adds a body made of a `ByteBuffer`.
public struct GateRequestBody: Sendable {
    private enum Storage: Sendable {
        case array([UInt8])
        case collection(any Collection<UInt8> & Sendable)
        case stream(AsyncStream<[UInt8]>)
    }

    private let storage: Storage

    /// A body that can be sent any number of times, made of any collection of bytes: an
    /// `[UInt8]` (kept without a copy), `Data`, `String.UTF8View`, a slice….
    ///
    /// - Complexity: O(1): the bytes are kept as given.
    public static func bytes(_ bytes: some Collection<UInt8> & Sendable) -> GateRequestBody {
        if let array = bytes as? [UInt8] { return GateRequestBody(storage: .array(array)) }
        return GateRequestBody(storage: .collection(bytes))
    }

    /// A body that can be sent only once.
    public static func stream(_ chunks: AsyncStream<[UInt8]>) -> GateRequestBody {
        GateRequestBody(storage: .stream(chunks))
    }

    /// Whether the body can be sent again, and so whether the request may be retried.
    public var isReplayable: Bool {
        if case .stream = storage { return false }
        return true
    }

    /// The bytes of a body that can be sent again, as they were given (an `[UInt8]`, `Data`, a
    /// `ByteBuffer`'s view…), for a transport that sends some type without a copy; `nil` for a
    /// streamed body.
    ///
    /// ```swift
    /// import Foundation
    ///
    /// if let data = body.contents as? Data { write(data) } else { write(Data(await body.collect())) }
    /// ```
    public var contents: (any Collection<UInt8> & Sendable)? {
        switch storage {
        case .array(let bytes): bytes
        case .collection(let bytes): bytes
        case .stream: nil
        }
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
        case .array, .collection:
            let (stream, continuation) = AsyncStream<[UInt8]>.makeStream()
            continuation.yield(bytesAsArray ?? [])
            continuation.finish()
            return stream
        case .stream(let chunks):
            return chunks
        }
    }

    /// The whole body as an array (a copy unless it was given as one); for a stream, reads it
    /// to the end (once).
    public func collect() async -> [UInt8] {
        if let bytes = bytesAsArray { return bytes }
        guard case .stream(let chunks) = storage else { return [] }
        var bytes: [UInt8] = []
        for await chunk in chunks { bytes += chunk }
        return bytes
    }

    /// The bytes of a replayable body as an array; `nil` for a stream.
    private var bytesAsArray: [UInt8]? {
        switch storage {
        case .array(let bytes): bytes
        case .collection(let bytes): Array(bytes)
        case .stream: nil
        }
    }
}
