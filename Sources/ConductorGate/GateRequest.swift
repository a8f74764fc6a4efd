import HTTPTypes

/// One request of a flight, as its task runs it: the request's parameters, and the algorithm
/// that drives it through the storage's operations — its deadline and the cache fallback
/// (``fly()``), and its attempts (``GateRequestAttempts``).
///
/// A class: the flight's task, the deadline's callback and the attempts each hold the request, and
/// copying a reference is one retain where copying the parameters is one per field.
final class GateRequest: Sendable {
    typealias Machine = GateStorage.Machine

    let sender: GateSender
    let request: HTTPRequest
    let body: GateRequestBody?
    let key: GateFlightKey
    let id: UInt64
    /// How errors and events name the request (``HTTPRequest/gateName``).
    let name: String
    let timeout: Duration?
    let needsAuthorization: Bool
    let retry: RequestRetryPolicy

    var storage: GateStorage { sender.storage }

    init(
        sender: GateSender, request: HTTPRequest, body: GateRequestBody?, key: GateFlightKey, id: UInt64, name: String,
        timeout: Duration?, needsAuthorization: Bool, retry: RequestRetryPolicy
    ) {
        self.sender = sender
        self.request = request
        self.body = body
        self.key = key
        self.id = id
        self.name = name
        self.timeout = timeout
        self.needsAuthorization = needsAuthorization
        self.retry = retry
    }

    /// Runs the flight to its end and settles it: the end is journaled, then every caller
    /// still on it is woken with the outcome — unless the flight ended already (its last caller
    /// left, a shutdown took it, or its deadline passed), which then decided its outcome.
    ///
    /// The attempts run inline, in the flight's task. A timeout is one deadline on the gate's
    /// timer: when it passes first, the timer's callback settles the flight as timed out (the
    /// gate's lock decides which settles first; the other finds the flight ended) and cancels
    /// the task, whose attempts are abandoned — so a transport that ignores cancellation cannot
    /// hold the callers past their deadline.
    func fly() async {
        // Only a deadline reads the last attempt's error: without one, nothing is kept.
        let lastError = timeout == nil ? nil : LastTransportError()
        let deadline = timeout.map { timeout in
            // Holds the request only while pending: the callback is let go when it fires or
            // when the flight cancels it below, whichever comes first.
            sender.requestTimer.schedule(at: sender.clock.now + timeout) {
                self.deadlinePassed(after: timeout, lastError: lastError)
            }
        }
        let result: Result<GateResponse, GateError>
        do {
            var attempts = GateRequestAttempts(self, lastError: lastError)
            result = .success(try await attempts.untilSettled())
        } catch let error as GateError {
            result = await fallingBackOnCache(error)
        } catch is CancellationError {
            result = .failure(.cancelled(name))
        } catch {
            result = .failure(.transport(name, attempts: 0, error))
        }
        if let deadline { sender.requestTimer.cancel(deadline) }
        settle(result)
    }

    /// The deadline passed before the flight ended (on the timer's task, no lock held): the
    /// flight ends timed out — or with the cache's answer — and its task is cancelled.
    private func deadlinePassed(after timeout: Duration, lastError: LastTransportError?) {
        let error = GateError.timedOut(name, after: timeout, lastError: lastError?.value)
        guard sender.cache != nil else { return settle(.failure(error), cancellingTask: true) }
        // The cache is asked asynchronously: off the timer's task, which serves every request.
        Task(executorPreference: TaskPlacement.executor) {
            self.settle(await self.fallingBackOnCache(error), cancellingTask: true)
        }
    }

    /// The cache's answer when the wire gave none (a transport error, exhausted retries, a
    /// timeout), or `error`.
    private func fallingBackOnCache(_ error: GateError) async -> Result<GateResponse, GateError> {
        guard [.transport, .retriesExhausted, .timedOut].contains(error.code), let cache = sender.cache,
            var cached = await cache.response(for: request)
        else { return .failure(error) }
        cached.isFromCache = true
        return .success(cached)
    }

    /// Journals the flight's end and wakes its callers, unless it ended already.
    private func settle(_ result: Result<GateResponse, GateError>, cancellingTask: Bool = false) {
        let end: GateEvent =
            switch result {
            case .success(let reply) where reply.isFromCache: .useCache(request: id)
            case .success(let reply): .success(request: id, status: reply.response.status.code)
            case .failure(let error): .failure(request: id, code: error.code)
            }
        if case .failure(let error) = result { sender.requestLog?.noteFailure(id, reason: error.message) }
        storage.settle(key, request: id, end: end, result: result, cancellingTask: cancellingTask)
        sender.requestLog?.close(id)
    }
}
