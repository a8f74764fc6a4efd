import AsyncHTTPClient
public import Conductor
import NIOCore
import NIOHTTP1
import NIOPosix

extension AsyncHTTPClientTransport {
    /// Transient — another attempt may succeed:
    /// - `HTTPClientError`: `readTimeout`, `writeTimeout`, `connectTimeout`,
    ///   `tlsHandshakeTimeout`, `socksHandshakeTimeout`, `httpProxyHandshakeTimeout`,
    ///   `getConnectionFromPoolTimeout`, `deadlineExceeded`, `remoteConnectionClosed`,
    ///   `uncleanShutdown` (a connection lost, reset or timed out);
    /// - SwiftNIO's `NIOConnectionError` (refused, unreachable, a name that did not resolve),
    ///   `IOError` (reset, broken pipe), the `ChannelError`s of a connection closed or timed
    ///   out (`connectTimeout`, `ioOnClosedChannel`, `alreadyClosed`, `eof`, `inputClosed`,
    ///   `outputClosed`, `writeHostUnreachable`), and `HTTPParserError.invalidEOFState` (the
    ///   server closed the connection inside a response).
    ///
    /// Permanent — another attempt would fail the same way: every other `HTTPClientError`
    /// (a bad URL or scheme, invalid header fields, redirect loops, a client already shut
    /// down, TLS that did not negotiate, `cancelled`), every other `ChannelError` and
    /// `HTTPParserError` (a malformed response), ``AsyncHTTPClientTransportError`` (a body
    /// over the limit, a request without a URL), `CancellationError`, and any other error
    /// (TLS and certificate failures among them).
    public func classify(_ error: any Error) -> TransportFailure {
        switch error {
        case let error as HTTPClientError:
            return Self.transientClientErrors.contains(error) ? .transient : .permanent
        case is NIOConnectionError, is IOError:
            return .transient
        case let error as ChannelError:
            switch error {
            case .connectTimeout, .ioOnClosedChannel, .alreadyClosed, .eof, .inputClosed, .outputClosed,
                .writeHostUnreachable:
                return .transient
            default:
                return .permanent
            }
        case let error as HTTPParserError:
            return error == .invalidEOFState ? .transient : .permanent
        default:
            return .permanent
        }
    }

    private static let transientClientErrors: [HTTPClientError] = [
        .readTimeout, .writeTimeout, .connectTimeout, .tlsHandshakeTimeout, .socksHandshakeTimeout,
        .httpProxyHandshakeTimeout, .getConnectionFromPoolTimeout, .deadlineExceeded, .remoteConnectionClosed,
        .uncleanShutdown,
    ]
}
