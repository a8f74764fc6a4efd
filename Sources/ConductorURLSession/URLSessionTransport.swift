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
/// let gate = RequestGate<String>(
///     transport: URLSessionTransport(),
///     authorize: { request, token in request.headerFields[.authorization] = "Bearer \(token)" },
///     refresh: { _ in try await auth.fetchToken() }
/// )
/// ```
///
/// Cancelling the sending task throws `CancellationError` at once; the `URLSession` task is
/// cancelled too, except on Linux, where FoundationNetworking cannot cancel safely and the
/// request is left to finish unheeded.
public struct URLSessionTransport: GateTransport {
    private let session: URLSession

    /// Uses `session`, the shared session by default.
    public init(session: URLSession = .shared) {
        self.session = session
    }

    public func send(_ request: HTTPRequest, body: RequestBody?) async throws -> (HTTPResponse, [UInt8]) {
        guard let urlRequest = URLRequest(httpRequest: request) else { throw URLError(.badURL) }
        let upload: Data? =
            if let body { Data(await body.collect()) } else { nil }
        let flight = Flight()
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let completion: @Sendable (Data?, URLResponse?, (any Error)?) -> Void = { data, response, error in
                    if let error {
                        flight.finish(.failure(error))
                    } else if let response = (response as? HTTPURLResponse)?.httpResponse {
                        flight.finish(.success((response, Array(data ?? Data()))))
                    } else {
                        flight.finish(.failure(URLError(.badServerResponse)))
                    }
                }
                let task =
                    if let upload {
                        session.uploadTask(with: urlRequest, from: upload, completionHandler: completion)
                    } else {
                        session.dataTask(with: urlRequest, completionHandler: completion)
                    }
                if flight.start(task, continuation) { task.resume() }
            }
        } onCancel: {
            flight.cancel()
        }
        return try flight.reply.get()
    }
}

/// One request's URLSession task and its caller, whichever ends first: the reply, or the
/// caller's cancellation.
///
/// The reply is handed over through the lock, not through the continuation: the completion
/// handler runs on a FoundationNetworking thread, and when it resumes a continuation before
/// the caller has suspended, the runtime hands the payload over with atomics the thread
/// sanitizer cannot see (it reported the response's storage as a data race). Read under the
/// same lock, the hand-over is visible to it.
private final class Flight: Sendable {
    typealias Reply = Result<(HTTPResponse, [UInt8]), any Error>

    private struct State {
        var task: URLSessionTask?
        var continuation: CheckedContinuation<Void, Never>?
        var reply: Reply?
    }

    private let state = Lock(State())

    /// Records the task and the caller's continuation; `false` (and the caller resumed) when
    /// the caller was cancelled first.
    func start(_ task: URLSessionTask, _ continuation: CheckedContinuation<Void, Never>) -> Bool {
        let ended = state.withLock { state in
            if state.reply == nil {
                state.task = task
                state.continuation = continuation
            }
            return state.reply != nil
        }
        if ended { continuation.resume() }
        return !ended
    }

    /// The first reply or cancellation wins; the caller is resumed once.
    func finish(_ reply: Reply) {
        let continuation = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard state.reply == nil else { return nil }
            state.reply = reply
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume()
    }

    func cancel() {
        finish(.failure(CancellationError()))
        #if !canImport(FoundationNetworking)
            state.withLock { $0.task }?.cancel()
        #endif
    }

    /// What ended the request; read once the caller has been resumed.
    var reply: Reply {
        state.withLock { $0.reply } ?? .failure(CancellationError())
    }
}
