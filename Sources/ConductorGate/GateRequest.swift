import HTTPTypes

/// One request of a flight, as its task runs it: the request's parameters, and the algorithm
/// that drives it through the storage's operations — its deadline and the cache fallback
/// (``fly()``), and its attempts (``GateRequestAttempts``).
///
/// A class: the flight's task, the deadline's race and the attempts each hold the request, and
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
    /// left, or a shutdown took it), which then decided its outcome.
    func fly() async {
        let result: Result<GateResponse, GateError>
        do {
            result = .success(try await drive())
        } catch let error as GateError {
            result = .failure(error)
        } catch is CancellationError {
            result = .failure(.cancelled(name))
        } catch {
            result = .failure(.transport(name, attempts: 0, error))
        }
        let end: GateEvent =
            switch result {
            case .success(let reply) where reply.isFromCache: .useCache(request: id)
            case .success(let reply): .success(request: id, status: reply.response.status.code)
            case .failure(let error): .failure(request: id, code: error.code)
            }
        if case .failure(let error) = result { sender.requestLog?.noteFailure(id, reason: error.message) }
        storage.settle(key, request: id, end: end, result: result)
        sender.requestLog?.close(id)
    }

    /// The attempts, within the request's deadline; the cache's answer when the wire gave none.
    @inline(__always)
    private func drive() async throws -> GateResponse {
        // Only a deadline reads the last attempt's error: without one, nothing is kept.
        let lastError = timeout == nil ? nil : LastTransportError()
        let attempts: @Sendable () async throws -> GateResponse = { [self] in
            var attempts = GateRequestAttempts(self, lastError: lastError)
            return try await attempts.untilSettled()
        }
        do {
            guard let timeout else { return try await attempts() }
            let timer = sender.requestTimer
            let outcome: Result<GateResponse, any Error> = await timer.race(
                {
                    do { return .success(try await attempts()) } catch { return .failure(error) }
                },
                until: sender.clock.now + timeout,
                onDeadline: { [name] in
                    .failure(GateError.timedOut(name, after: timeout, lastError: lastError?.value))
                },
                onCancel: { [name] in .failure(GateError.cancelled(name)) }
            )
            return try outcome.get()
        } catch let error as GateError where [.transport, .retriesExhausted, .timedOut].contains(error.code) {
            guard let cache = sender.cache, var cached = await cache.response(for: request) else { throw error }
            cached.isFromCache = true
            return cached
        }
    }
}
