import AsyncHTTPClient
public import ConductorGate
import NIOCore
import NIOHTTP1
import NIOPosix

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Android)
    import Android
#endif

extension AsyncHTTPClientTransport {
    /// Transient — another attempt may succeed:
    /// - `HTTPClientError`: `readTimeout`, `writeTimeout`, `connectTimeout`,
    ///   `tlsHandshakeTimeout`, `socksHandshakeTimeout`, `httpProxyHandshakeTimeout`,
    ///   `getConnectionFromPoolTimeout`, `deadlineExceeded`, `remoteConnectionClosed`,
    ///   `uncleanShutdown` (a connection lost, reset or timed out);
    /// - SwiftNIO's `NIOConnectionError` (refused, unreachable, a name that did not resolve),
    ///   an `IOError` whose `errno` says the connection or the network failed, or the system
    ///   ran short of sockets for now (`ECONNRESET`, `ECONNABORTED`, `ECONNREFUSED`, `EPIPE`,
    ///   `ETIMEDOUT`, `ENOTCONN`, `EHOSTUNREACH`, `EHOSTDOWN`, `ENETUNREACH`, `ENETDOWN`,
    ///   `ENETRESET`, `EADDRNOTAVAIL`, `EMFILE`, `ENFILE`, `ENOBUFS`), the `ChannelError`s of a
    ///   connection closed or timed out (`connectTimeout`, `ioOnClosedChannel`, `alreadyClosed`,
    ///   `eof`, `inputClosed`, `outputClosed`, `writeHostUnreachable`), and
    ///   `HTTPParserError.invalidEOFState` (the server closed the connection inside a response).
    ///
    /// Permanent — another attempt would fail the same way: every other `HTTPClientError`
    /// (a bad URL or scheme, invalid header fields, redirect loops, a client already shut
    /// down, TLS that did not negotiate, `cancelled`), every other `IOError`, `ChannelError`
    /// and `HTTPParserError` (a malformed response), ``AsyncHTTPClientTransportError`` (a body
    /// over the limit, a request without a URL), `CancellationError`, and any other error
    /// (TLS and certificate failures among them).
    public func classify(_ error: any Error) -> TransportFailure {
        switch error {
        case let error as HTTPClientError:
            return Self.transientClientErrors.contains(error) ? .transient : .permanent
        case is NIOConnectionError:
            return .transient
        case let error as IOError:
            return Self.transientErrnos.contains(error.errnoCode) ? .transient : .permanent
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

    /// A list of what is known to pass: an `errno` not named here (`EINVAL`, `EBADF`,
    /// `EACCES`, …) says something another attempt would meet again.
    private static let transientErrnos: Set<CInt> = [
        ECONNRESET, ECONNABORTED, ECONNREFUSED, EPIPE, ETIMEDOUT, ENOTCONN, EHOSTUNREACH, EHOSTDOWN, ENETUNREACH,
        ENETDOWN, ENETRESET, EADDRNOTAVAIL, EMFILE, ENFILE, ENOBUFS,
    ]

    private static let transientClientErrors: [HTTPClientError] = [
        .readTimeout, .writeTimeout, .connectTimeout, .tlsHandshakeTimeout, .socksHandshakeTimeout,
        .httpProxyHandshakeTimeout, .getConnectionFromPoolTimeout, .deadlineExceeded, .remoteConnectionClosed,
        .uncleanShutdown,
    ]
}
