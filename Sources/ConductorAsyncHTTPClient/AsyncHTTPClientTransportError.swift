public import Foundation
import HTTPTypes

/// An error of ``AsyncHTTPClientTransport`` itself (the rest are AsyncHTTPClient's and
/// SwiftNIO's). Through a ``RequestGate`` it arrives as the `underlyingError` of a
/// `GateError` whose code is `transport`:
///
/// ```swift
/// do {
///     _ = try await gate.send(download)
/// } catch let error where (error.underlyingError as? AsyncHTTPClientTransportError)?.code == .responseTooLarge {
///     showTooLarge()  // "GET /export: the response body is larger than the limit of 1048576 bytes …"
/// }
/// ```
public struct AsyncHTTPClientTransportError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong. New codes may be added, so a `switch` should have a `default`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Kind: Hashable, Sendable {
            case responseTooLarge, invalidRequest, invalidConfiguration
        }

        fileprivate let kind: Kind

        /// The response body is larger than the transport's `maxResponseBytes`: nothing past
        /// the limit was kept, and the connection was closed. Permanent.
        public static let responseTooLarge = Code(kind: .responseTooLarge)
        /// The request cannot be sent: it has no scheme or no authority. Permanent.
        public static let invalidRequest = Code(kind: .invalidRequest)
        /// A value given to the transport's initializer is out of range.
        public static let invalidConfiguration = Code(kind: .invalidConfiguration)

        public var description: String { "\(kind)" }
    }

    /// What went wrong.
    public let code: Code
    /// A sentence that names the request (method and path, never a header) or the value.
    public let message: String

    public var description: String { "AsyncHTTPClientTransportError.\(code): \(message)" }

    static func responseTooLarge(_ request: HTTPRequest, declared: Int?, limit: Int) -> Self {
        let size = declared.map { "its Content-Length is \($0) bytes" } ?? "more bytes arrived"
        return Self(
            code: .responseTooLarge,
            message: "\(request.nameForErrors): the response body is larger than the limit of \(limit) bytes "
                + "(\(size)); raise maxResponseBytes to accept it")
    }

    static func invalidRequest(_ request: HTTPRequest, _ reason: String) -> Self {
        Self(code: .invalidRequest, message: "\(request.nameForErrors) cannot be sent: \(reason)")
    }

    static func invalidConfiguration(_ reason: String) -> Self {
        Self(code: .invalidConfiguration, message: "AsyncHTTPClientTransport: \(reason)")
    }
}

/// What an app shows: `error.localizedDescription` is the message that names the culprit,
/// not Foundation's "The operation could not be completed".
extension AsyncHTTPClientTransportError: LocalizedError {
    public var errorDescription: String? { message }
}
