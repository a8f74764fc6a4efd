public import ConductorGate
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
/// The response says where it came from: ``GateTransportResponse/url`` is the URL that
/// answered (after redirects), ``GateTransportResponse/redirects`` each redirect URLSession
/// followed. The redirects are seen through a task delegate, which hands each one to the
/// session's own delegate when it has one, so a session that refuses redirects still does.
///
/// Its errors are `URLError`s; ``classify(_:)`` tells the gate which are worth another attempt.
public struct URLSessionTransport: GateTransport {
    private let session: URLSession

    /// Uses `session`, the shared session by default.
    public init(session: URLSession = .shared) {
        self.session = session
    }

    /// Transient — another attempt may succeed — is a `URLError` whose code says the network
    /// or the server failed this time: `timedOut`, `networkConnectionLost`,
    /// `notConnectedToInternet`, `cannotConnectToHost` (refused), `cannotFindHost`,
    /// `dnsLookupFailed`, `cannotLoadFromNetwork`, `badServerResponse`, `secureConnectionFailed`,
    /// `serverCertificateHasBadDate`, `serverCertificateNotYetValid` (a clock that may be put
    /// right), `dataNotAllowed`, `internationalRoamingOff`, `callIsActive`,
    /// `backgroundSessionInUseByAnotherProcess`, `backgroundSessionWasDisconnected`,
    /// `downloadDecodingFailedMidStream` and `downloadDecodingFailedToComplete` — the codes
    /// Alamofire retries — and, on Linux only, `unknown`, which is how FoundationNetworking
    /// reports a connection dropped mid-response.
    ///
    /// Permanent — another attempt would fail the same way — is every other `URLError` (a
    /// malformed URL or unsupported scheme, a certificate that is not trusted, a cancelled
    /// request, authentication the user refused, a response that cannot be decoded or parsed,
    /// a file that cannot be read or written, a body stream already used up, …) and any error
    /// that is not a `URLError`.
    public func classify(_ error: any Error) -> TransportFailure {
        guard let error = error as? URLError else { return .permanent }
        return Self.transientCodes.contains(error.code) ? .transient : .permanent
    }

    /// The codes a later attempt may not see again. A list of what is known to pass, not of
    /// what is known to last: a code a platform adds is permanent until it is listed here.
    private static let transientCodes: Set<URLError.Code> = {
        var codes: Set<URLError.Code> = [
            .timedOut, .networkConnectionLost, .notConnectedToInternet, .cannotConnectToHost, .cannotFindHost,
            .dnsLookupFailed, .cannotLoadFromNetwork, .badServerResponse, .secureConnectionFailed,
            .serverCertificateHasBadDate, .serverCertificateNotYetValid, .dataNotAllowed, .internationalRoamingOff,
            .callIsActive, .backgroundSessionInUseByAnotherProcess, .backgroundSessionWasDisconnected,
            .downloadDecodingFailedMidStream, .downloadDecodingFailedToComplete,
        ]
        #if canImport(FoundationNetworking)
            // NB: FoundationNetworking reports a connection dropped mid-response as `unknown`.
            codes.insert(.unknown)
        #endif
        return codes
    }()

    public func send(_ request: HTTPRequest, body: GateRequestBody?) async throws -> GateTransportResponse {
        guard let urlRequest = URLRequest(httpRequest: request) else { throw URLError(.badURL) }
        let upload: Data? =
            if let body { Data(await body.collect()) } else { nil }
        // Cancelled already: make no task at all (one that never runs would keep its completion
        // handler in the session).
        if Task.isCancelled { throw CancellationError() }
        let flight = Flight()
        let completion: @Sendable (Data?, URLResponse?, (any Error)?) -> Void = { data, response, error in
            if let error {
                flight.reply.settle(.failure(error))
            } else if let http = response as? HTTPURLResponse, let head = http.httpResponse {
                let reply = GateTransportResponse(
                    response: head, body: Array(data ?? Data()), url: http.url, redirects: flight.redirects.followed)
                flight.reply.settle(.success(reply))
            } else {
                flight.reply.settle(.failure(URLError(.badServerResponse)))
            }
        }
        let task =
            if let upload {
                session.uploadTask(with: urlRequest, from: upload, completionHandler: completion)
            } else {
                session.dataTask(with: urlRequest, completionHandler: completion)
            }
        task.delegate = flight.redirects
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
    typealias Reply = Result<GateTransportResponse, any Error>

    let reply = OnceCell<Reply>()
    /// The task's delegate, which sees the redirects.
    let redirects = RedirectRecorder()
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
        reply.settle(.failure(CancellationError()))
        #if !canImport(FoundationNetworking)
            task.withLock { $0 }?.cancel()
        #endif
    }
}

/// A task's delegate that records each redirect as the session follows it. What follows is
/// decided by the session's own delegate when it has one (a task delegate would otherwise hide
/// it), and is the redirect's request otherwise, as without a delegate.
private final class RedirectRecorder: NSObject, URLSessionTaskDelegate, Sendable {
    private let hops = Lock<[GateRedirect]>([])

    /// The redirects followed so far; complete once the task has completed.
    var followed: [GateRedirect] { hops.withLock { $0 } }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        let decided: @Sendable (URLRequest?) -> Void = { next in
            if next != nil, let url = response.url {
                self.hops.withLock { $0.append(GateRedirect(url: url, status: .init(code: response.statusCode))) }
            }
            completionHandler(next)
        }
        #if canImport(FoundationNetworking)
            // NB: FoundationNetworking's delegate protocols have default implementations (which
            // follow the redirect), so the session's delegate can be called whatever it implements.
            if let delegate = session.delegate as? any URLSessionTaskDelegate {
                delegate.urlSession(
                    session, task: task, willPerformHTTPRedirection: response, newRequest: request,
                    completionHandler: decided)
                return
            }
        #else
            if let delegate = session.delegate as? any URLSessionTaskDelegate,
                delegate.urlSession?(
                    session, task: task, willPerformHTTPRedirection: response, newRequest: request,
                    completionHandler: decided) != nil
            {
                return
            }
        #endif
        decided(request)
    }
}
