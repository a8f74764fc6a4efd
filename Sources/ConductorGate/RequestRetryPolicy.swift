import HTTPTypes

/// Which failures of one request a ``RequestGate`` may answer by sending it again, and how many
/// sends it gets.
///
/// A request that failed on the network, or whose response was classified
/// ``ResponseVerdict/retry``, may already have been carried out by the server: a `POST` that
/// timed out after the server charged a card must not be sent again. So by default
/// (``automatic``) only idempotent requests are retried: `GET`, `HEAD`, `OPTIONS`, `PUT`,
/// `DELETE` and `TRACE`, and any request with an `Idempotency-Key` header field. Others fail
/// after their first send unless they opt in:
///
/// ```swift
/// // The server deduplicates by the order's id, so retrying the POST is safe:
/// try await gate.send(placeOrder, body: .bytes(Array(json.utf8)), retry: .always())
/// // A search that is worthless once stale: one send, whatever happens.
/// try await gate.send(search, retry: .never)
/// // A slow endpoint that deserves more tries than the gate's default.
/// try await gate.send(export, retry: .automatic(maxAttempts: 6))
/// ```
///
/// Whatever the policy, a request is re-sent after a refresh when the server rejected its
/// credential (``ResponseVerdict/credentialExpired``): a rejected credential means the server
/// did nothing. That re-send counts against the same attempt budget. A transport error the
/// transport calls permanent (``GateTransport/classify(_:)``) is never retried, and neither is
/// a request with a streamed body.
public struct RequestRetryPolicy: Hashable, Sendable, CustomStringConvertible {
    private enum Condition: Hashable, Sendable {
        case whenIdempotent, always, never
    }

    private let condition: Condition
    /// Sends allowed in all, across every kind of retry; `nil` uses
    /// ``GateConfiguration/maxAttempts``.
    public let maxAttempts: Int?

    private init(_ condition: Condition, maxAttempts: Int?) {
        self.condition = condition
        self.maxAttempts = maxAttempts
    }

    /// Retries only idempotent requests (by method, or an `Idempotency-Key` header field),
    /// within the gate's ``GateConfiguration/maxAttempts``. The default.
    public static let automatic = RequestRetryPolicy(.whenIdempotent, maxAttempts: nil)

    /// Retries only idempotent requests, with `maxAttempts` sends in all (at least 1).
    public static func automatic(maxAttempts: Int) -> RequestRetryPolicy {
        RequestRetryPolicy(.whenIdempotent, maxAttempts: maxAttempts)
    }

    /// Retries whatever the method: for a request you know the server can receive twice.
    /// `maxAttempts` (at least 1) replaces the gate's ``GateConfiguration/maxAttempts``.
    public static func always(maxAttempts: Int? = nil) -> RequestRetryPolicy {
        RequestRetryPolicy(.always, maxAttempts: maxAttempts)
    }

    /// Never retries after a transport error or a ``ResponseVerdict/retry`` verdict. The request
    /// is still re-sent after a refresh when its credential was rejected, within
    /// ``GateConfiguration/maxAttempts``.
    public static let never = RequestRetryPolicy(.never, maxAttempts: nil)

    public var description: String {
        let condition =
            switch condition {
            case .whenIdempotent: "automatic"
            case .always: "always"
            case .never: "never"
            }
        return maxAttempts.map { "\(condition) (max \($0) attempts)" } ?? condition
    }

    /// Why `request` may not be sent again after a failure, or `nil` when it may.
    func refusal(for request: HTTPRequest) -> String? {
        switch condition {
        case .always: nil
        case .never: "not retried: its retry policy is never"
        case .whenIdempotent:
            Self.isIdempotent(request) ? nil : "not retried: \(request.method.rawValue) is not idempotent"
        }
    }

    /// Idempotent by its method (RFC 9110, 9.2.2), or declared so by an `Idempotency-Key`.
    static func isIdempotent(_ request: HTTPRequest) -> Bool {
        switch request.method {
        case .get, .head, .options, .put, .delete, .trace: true
        default: request.headerFields[idempotencyKey] != nil
        }
    }

    private static let idempotencyKey = HTTPField.Name("Idempotency-Key")!
}
