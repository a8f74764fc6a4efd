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
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
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
    }
}

/// One send: its `URLSessionTask` and the caller's continuation, resumed exactly once —
/// by the response, or at once by cancellation.
///
/// NB: on Linux, FoundationNetworking's `URLSessionTask.cancel()` is unsafe to call here:
/// called from a cancellation handler it can deadlock with the session's queue (the handler
/// runs under the Swift task's status lock while the session resumes that task), and called
/// after the task completed it traps ("Trying to access a behaviour for a task that in not in
/// the registry"). So on Linux a cancelled send returns `CancellationError` at once and the
/// request is abandoned: it finishes on the wire unheeded. Elsewhere the task is cancelled.
private final class Flight: Sendable {
    typealias Reply = Result<(HTTPResponse, [UInt8]), any Error>

    private struct State {
        var task: URLSessionTask?
        var continuation: CheckedContinuation<(HTTPResponse, [UInt8]), any Error>?
        var cancelled = false
    }

    private let state = Lock(State())

    /// Records the task and the continuation; returns `false` (having resumed the
    /// continuation with `CancellationError`) if the caller was cancelled already.
    func start(_ task: URLSessionTask, _ continuation: CheckedContinuation<(HTTPResponse, [UInt8]), any Error>) -> Bool
    {
        let cancelled = state.withLock { state in
            if !state.cancelled {
                state.task = task
                state.continuation = continuation
            }
            return state.cancelled
        }
        if cancelled { continuation.resume(throwing: CancellationError()) }
        return !cancelled
    }

    func finish(_ reply: Reply) {
        let continuation = state.withLock { state in
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(with: reply)
    }

    func cancel() {
        let (continuation, task) = state.withLock { state in
            state.cancelled = true
            defer { state.continuation = nil }
            return (state.continuation, state.task)
        }
        continuation?.resume(throwing: CancellationError())
        #if !canImport(FoundationNetworking)
            task?.cancel()
        #else
            _ = task
        #endif
    }
}
