public import ConductorGate
public import NIOCore

extension GateRequestBody {
    /// A body that can be sent any number of times, made of a `ByteBuffer`'s readable bytes:
    /// ``AsyncHTTPClientTransport`` sends it as it is, without a copy.
    ///
    /// ```swift
    /// var buffer = ByteBuffer()
    /// buffer.writeString(json)
    /// try await gate.send(placeOrder, body: .bytes(buffer))
    /// ```
    ///
    /// - Complexity: O(1).
    public static func bytes(_ buffer: ByteBuffer) -> GateRequestBody {
        .bytes(buffer.readableBytesView)
    }
}

extension GateResponse {
    /// The body in a `ByteBuffer`, for a server that hands it on (a copy of ``body``).
    ///
    /// ```swift
    /// let reply = try await gate.send(request)
    /// let buffer = reply.bodyBuffer  // for the server's own response
    /// print(buffer.readableBytes)
    /// ```
    ///
    /// - Complexity: O(*n*) in the body's size.
    public var bodyBuffer: ByteBuffer { ByteBuffer(bytes: body) }
}
