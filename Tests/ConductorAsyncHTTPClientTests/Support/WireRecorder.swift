import Conductor
import Foundation
import NIOCore
import NIOPosix

/// A bare HTTP/1.1 server on 127.0.0.1 that keeps each request head exactly as it came off
/// the wire, and answers every request `200` with an empty body. FlyingFox folds repeated
/// header fields into one, so it cannot tell whether a request carried a field twice; this
/// can. It reads heads only: a body, if any, is ignored (the test of a streamed upload needs
/// only to see its head arrive while the body is still being written).
final class WireRecorder: Sendable {
    private let channel: any Channel
    private let heads: HeadLog
    let port: Int

    static func start() async throws -> WireRecorder {
        let heads = HeadLog()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(HeadRecorder(heads: heads))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        return WireRecorder(channel: channel, heads: heads, port: channel.localAddress?.port ?? 0)
    }

    private init(channel: any Channel, heads: HeadLog, port: Int) {
        self.channel = channel
        self.heads = heads
        self.port = port
    }

    var authority: String { "127.0.0.1:\(port)" }

    /// Every request head received, as text, in arrival order.
    var receivedHeads: [String] { heads.all }

    /// Each head as it arrives.
    var arrivals: AsyncStream<String> { heads.arrivals }

    /// The values of every field named `name` (any case) in `head`, repeats included.
    static func values(of name: String, in head: String) -> [String] {
        head.split(separator: "\r\n").compactMap { line in
            guard let colon = line.firstIndex(of: ":"), line[..<colon].lowercased() == name.lowercased() else {
                return nil
            }
            return line[line.index(after: colon)...].trimmingSpaces()
        }
    }

    func stop() async throws {
        try await channel.close()
    }
}

/// Collects bytes until a blank line ends a request head, records the head and answers it.
private final class HeadRecorder: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let heads: HeadLog
    private var pending = ""

    init(heads: HeadLog) {
        self.heads = heads
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        pending += buffer.readString(length: buffer.readableBytes) ?? ""
        while let end = pending.range(of: "\r\n\r\n") {
            let head = String(pending[..<end.lowerBound])
            pending = String(pending[end.upperBound...])
            heads.append(head)
            let response = "HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n"
            context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(string: response)), promise: nil)
        }
    }
}

/// The heads received, shared by every connection's handler.
private final class HeadLog: Sendable {
    private let heads = Lock<[String]>([])
    let arrivals: AsyncStream<String>
    private let arrived: AsyncStream<String>.Continuation

    init() {
        (arrivals, arrived) = AsyncStream<String>.makeStream()
    }

    func append(_ head: String) {
        heads.withLock { $0.append(head) }
        arrived.yield(head)
    }

    var all: [String] { heads.withLock { $0 } }
}

extension Substring {
    fileprivate func trimmingSpaces() -> String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
