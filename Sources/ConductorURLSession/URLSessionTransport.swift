public import Conductor
import Dispatch
public import HTTPTypes
import HTTPTypesFoundation

#if canImport(FoundationNetworking)
    import Foundation
    public import FoundationNetworking
#else
    public import Foundation
#endif

/// Sends a ``RequestGate``'s requests with `URLSession` (FoundationNetworking on Linux).
///
/// ```swift
/// let gate = try RequestGate<String>(
///     transport: URLSessionTransport(),
///     authorize: { request, token in request.headerFields[.authorization] = "Bearer \(token)" },
///     refresh: { _ in try await auth.fetchToken() }
/// )
/// ```
///
/// Cancelling the sending task throws `CancellationError` at once; the `URLSession` task is
/// cancelled too, except on Linux, where FoundationNetworking cannot cancel safely and the
/// request is left to finish unheeded.
///
/// Its errors are `URLError`s; ``classify(_:)`` tells the gate which are worth another attempt.
public struct URLSessionTransport: GateTransport {
    private let session: URLSession

    /// Uses `session`, the shared session by default.
    public init(session: URLSession = .shared) {
        self.session = session
    }

    /// Permanent — another attempt would fail the same way: a malformed URL or unsupported
    /// scheme, a TLS or certificate failure, a cancelled request, authentication the user
    /// refused, too many redirects, a body over the limit, and any error that is not a
    /// `URLError`. Every other `URLError` is transient: a timeout, a connection lost, reset or
    /// refused, a name that did not resolve, no network — and whatever code the platform picks
    /// for a connection dropped mid-response (FoundationNetworking on Linux says `.unknown`).
    public func classify(_ error: any Error) -> TransportFailure {
        guard let error = error as? URLError else { return .permanent }
        switch error.code {
        case .badURL, .unsupportedURL, .cancelled, .secureConnectionFailed, .serverCertificateHasBadDate,
            .serverCertificateUntrusted, .serverCertificateHasUnknownRoot, .serverCertificateNotYetValid,
            .clientCertificateRejected, .clientCertificateRequired, .userCancelledAuthentication,
            .userAuthenticationRequired, .httpTooManyRedirects, .redirectToNonExistentLocation,
            .dataLengthExceedsMaximum:
            return .permanent
        default:
            return .transient
        }
    }

    public func send(_ request: HTTPRequest, body: RequestBody?) async throws -> (HTTPResponse, [UInt8]) {
        guard let urlRequest = URLRequest(httpRequest: request) else { throw URLError(.badURL) }
        let upload: Data? =
            if let body { Data(await body.collect()) } else { nil }
        // Cancelled already: make no task at all (one that never runs would keep its completion
        // handler in the session).
        if Task.isCancelled { throw CancellationError() }
        let flight = Flight()
        let completion: @Sendable (Data?, URLResponse?, (any Error)?) -> Void = { data, response, error in
            if let error {
                flight.reply.resolve(.failure(error))
            } else if let response = (response as? HTTPURLResponse)?.httpResponse {
                flight.reply.resolve(.success((response, Array(data ?? Data()))))
            } else {
                flight.reply.resolve(.failure(URLError(.badServerResponse)))
            }
        }
        let task =
            if let upload {
                session.uploadTask(with: urlRequest, from: upload, completionHandler: completion)
            } else {
                session.dataTask(with: urlRequest, completionHandler: completion)
            }
        return try await withTaskCancellationHandler {
            if flight.start(task) { task.resume() }
            // `nil`: the caller was cancelled first.
            guard let reply = await flight.reply.wait() else { throw CancellationError() }
            return try reply.get()
        } onCancel: {
            flight.cancel()
        }
    }
}

/// One request's URLSession task and its reply, whichever ends first: the reply, or the
/// caller's cancellation. The reply is a `OnceCell`, which hands it over in a way the
/// thread sanitizer sees even when FoundationNetworking's completion handler runs before the
/// caller has suspended.
private final class Flight: Sendable {
    typealias Reply = Result<(HTTPResponse, [UInt8]), any Error>

    let reply = OnceCell<Reply>()
    /// Kept only so a cancellation can cancel it (not on Linux: see `cancel`).
    private let task = Lock<URLSessionTask?>(nil)

    /// Records the task; `false` when the caller was cancelled first, and the task must not
    /// start. (The task is recorded before the reply is read, and `cancel` settles the reply
    /// before it reads the task: one of them sees the other.)
    func start(_ task: URLSessionTask) -> Bool {
        self.task.withLock { $0 = task }
        guard reply.value != nil else { return true }
        // Cancelled in between: the task never runs. Let go of it (cancel it where that is safe,
        // so the session drops its completion handler and, with it, this flight).
        #if canImport(FoundationNetworking)
            self.task.withLock { $0 = nil }
        #else
            self.task.withLock { task in
                defer { task = nil }
                return task
            }?.cancel()
        #endif
        return false
    }

    func cancel() {
        reply.resolve(.failure(CancellationError()))
        #if !canImport(FoundationNetworking)
            task.withLock { $0 }?.cancel()
        #endif
    }
}
