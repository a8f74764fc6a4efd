import HTTPTypes

/// A request's attempts until one settles it: each takes a slot, is authorized (or parks behind
/// the refresh), goes out on the wire, and the answer decides — done, sent again after a
/// backoff, sent again behind a refresh after a rejected credential, or failed. What the
/// attempts so far have learned is this value's state.
struct GateRequestAttempts {
    typealias Machine = GateStorage.Machine
    typealias Slot = Machine.Slot

    /// One attempt's outcome on the wire.
    private enum Sent {
        case response(GateTransportResponse, ResponseVerdict)
        case transportFailed(any Error)
    }

    let request: GateRequest
    private let storage: GateStorage
    private let budget: Int
    private let replayable: Bool
    /// Why a failure (an error on the wire, a "retry" verdict) may not be answered by sending
    /// again: the server may have carried the request out already.
    private let retryRefusal: String?
    private let lastError: LastTransportError?
    /// Sends so far.
    private var sent = 0
    /// A slot the refresh's end handed this request when it woke it from parking: its next
    /// attempt goes on with it instead of queuing again.
    private var handedSlot: Slot?
    /// The status of the last response, which every error that ends the request carries.
    private var lastStatus: Int?
    /// Whether this request has already refreshed a credential judged stale: it does so once,
    /// then sends what is current and lets the server judge, so a judge that calls every
    /// credential stale costs a request one refresh, not a loop of them.
    private var refreshedStale = false
    /// What the transport threw on the latest attempt that failed in it: the cause a
    /// `retriesExhausted` error keeps when the attempts after it got responses.
    private var lastTransportError: (any Error)?

    init(_ request: GateRequest, lastError: LastTransportError?) {
        self.request = request
        self.storage = request.storage
        self.budget = request.retry.schedule.maxAttempts
        self.replayable = request.body?.isReplayable ?? true
        self.retryRefusal = request.retry.refusal(for: request.request)
        self.lastError = lastError
    }

    private var name: String { request.name }
    private var judgesNow: Bool { request.sender.judges && !refreshedStale }

    mutating func untilSettled() async throws -> GateResponse {
        while true {
            let slot = try await takeSlot()
            guard let (credential, version) = try await authorize(slot) else { continue }
            sent += 1
            let outcome = await send(with: credential)
            if case .transportFailed(let error) = outcome {
                lastError?.record(error)
                lastTransportError = error
            } else {
                lastError?.record(nil)
            }
            switch outcome {
            case .response(let reply, .credentialExpired) where request.needsAuthorization:
                lastStatus = reply.response.status.code
                try await rejected(version, slot: slot)
            case .response(let reply, let verdict):
                if let reply = try await answered(reply, verdict, slot: slot) { return reply }
            case .transportFailed(let error):
                try await transportFailed(error, slot: slot)
            }
        }
    }

    // The steps of the loop are inlined into it: each async call of its own would hop to the
    // task's executor on entry, a cost on every request.

    /// The slot the next attempt goes out in: the one handed over, or one it waits for.
    @inline(__always)
    private mutating func takeSlot() async throws -> Slot {
        if let handed = handedSlot {
            // Its decision is a send already recorded as `running`: it goes out, as any request
            // whose decision said send does, and a cancellation reaches it on the wire.
            handedSlot = nil
            return handed
        }
        if Task.isCancelled { throw GateError.cancelled(name) }
        let claimant = Machine.SlotClaimant.attempt(
            key: request.key, request: request.id, number: sent + 1, needsAuthorization: request.needsAuthorization)
        switch await storage.acquireSlot(for: claimant, judges: judgesNow) {
        case .started(let slot): return slot
        case .cancelled: throw GateError.cancelled(name)
        case .shutDown: throw GateError.shutDown(name)
        }
    }

    /// The credential (and its version) the attempt in `slot` sends; `nil` when the attempt
    /// starts over (it parked and was woken, with a slot handed to it or to queue again).
    /// Throws the error that ends the request, giving the slot back if it still holds it.
    @inline(__always)
    private mutating func authorize(_ slot: Slot) async throws -> (ErasedCredential?, Int)? {
        switch await authorizeOrPark(slot) {
        case .granted(let handed):
            // Parked and woken holding a new slot: this attempt goes on with it.
            handedSlot = handed
            return nil
        case .send(let credential, let version):
            return (credential, version)
        case .failNow(let failure):
            storage.releaseSlot(slot.priority)
            throw failure.error(name: name, status: lastStatus)
        case .cancelledNow:
            storage.releaseSlot(slot.priority)
            throw GateError.cancelled(name)
        case .proceed:
            return nil
        case .fail(let failure):
            throw failure.error(name: name, status: lastStatus)
        case .cancelled:
            throw GateError.cancelled(name)
        }
    }

    /// The request holds `slot`. Either it may send now (keeping the slot), or it parks behind
    /// the refresh (giving the slot back) until the refresh ends.
    ///
    /// With a `requiresRefresh` judge, the credential the request would send is judged first,
    /// outside the lock (it is user code), and the send is confirmed in a second transition
    /// only if the judged version is still current; a stale one starts the refresh as a
    /// rejection would, and the request parks behind it.
    @inline(__always)
    private mutating func authorizeOrPark(_ slot: Slot) async -> Machine.Resumption {
        let attempt = sent + 1
        let judges = judgesNow
        var judged: (version: Int, stale: Bool)?
        // The first decision came with the slot, unless a slot free after all was found only
        // when queuing for one.
        var decision = slot.decision
        while true {
            let current =
                decision
                ?? storage.decide(
                    request: request.id, attempt: attempt, epoch: slot.epoch,
                    needsAuthorization: request.needsAuthorization, judges: judges, judged: judged)
            switch current {
            case .send(let credential, let version): return .send(credential, version: version)
            case .failNow(let failure): return .failNow(failure)
            case .cancelledNow: return .cancelledNow
            case .judge(let credential, let version):
                // User code: outside the lock.
                judged = (version, credential.isStale?() ?? false)
                decision = nil
            case .stale(let version):
                refreshedStale = true
                return await storage.rejected(
                    request.key, request: request.id, version: version, nextAttempt: attempt, slot: slot.priority,
                    reason: .stale, waits: true, now: request.sender.clock.now)
            case .park:
                // Parks behind the refresh running (or one it starts, when there is no credential
                // yet), giving its slot back; unless the state changed since the decision.
                return await storage.park(
                    request.key, request: request.id, attempt: attempt, epoch: slot.epoch,
                    needsAuthorization: request.needsAuthorization, slot: slot.priority,
                    now: request.sender.clock.now)
            }
        }
    }

    @inline(__always)
    private func send(with credential: ErasedCredential?) async -> Sent {
        var authorized = request.request
        credential?.authorize(&authorized)
        request.sender.instruments?.inject(into: &authorized)
        do {
            let reply = try await request.sender.transport.send(authorized, body: request.body)
            return .response(reply, request.sender.classify(reply.response))
        } catch {
            return .transportFailed(error)
        }
    }

    /// The server rejected credential `version`. The slot is given back in the rejection's
    /// transition: the request that takes it next already sees the refresh. A rejected
    /// credential means the server did nothing, so the request is sent again whatever its retry
    /// policy, within its budget.
    private mutating func rejected(_ version: Int, slot: Slot) async throws {
        let now = request.sender.clock.now
        guard sent < budget, replayable else {
            // Still decide the refresh this rejection calls for, then give up — with the more
            // specific cause when that decision refused the refresh.
            if case .fail(let failure) = await storage.rejected(
                request.key, request: request.id, version: version, nextAttempt: sent + 1, slot: slot.priority,
                reason: .rejected, waits: false, now: now)
            {
                throw failure.error(name: name, status: lastStatus)
            }
            try mayResend("credential v\(version) rejected")
            return
        }
        switch await storage.rejected(
            request.key, request: request.id, version: version, nextAttempt: sent + 1, slot: slot.priority,
            reason: .rejected, waits: true, now: now)
        {
        case .granted(let handed): handedSlot = handed
        case .proceed, .send: break
        case .fail(let failure), .failNow(let failure): throw failure.error(name: name, status: lastStatus)
        case .cancelled, .cancelledNow: throw GateError.cancelled(name)
        }
    }

    /// A response other than a rejected credential: the reply, or `nil` after backing off for
    /// the next attempt; throws the error that ends the request.
    @inline(__always)
    private mutating func answered(
        _ received: GateTransportResponse, _ verdict: ResponseVerdict, slot: Slot
    ) async throws -> GateResponse? {
        let response = received.response
        let status = response.status.code
        lastStatus = status
        switch verdict {
        case .success:
            storage.releaseSlot(slot.priority)
            let reply = GateResponse(received)
            await request.sender.cache?.store(reply, for: request.request)
            return reply
        case .retry:
            if let retryRefusal {
                storage.releaseSlot(slot.priority)
                throw GateError.retriesExhausted(
                    name, attempts: sent, last: "status \(status); \(retryRefusal)", status: status,
                    lastError: lastTransportError)
            }
            do { try mayResend("status \(status)") } catch {
                storage.releaseSlot(slot.priority)
                throw error
            }
            try await backOff(
                releasing: slot.priority, retryAfter: Self.retryAfter(in: response), status: status,
                reason: "status \(status)")
            return nil
        default:
            storage.releaseSlot(slot.priority)
            throw GateError.rejected(name, status: status)
        }
    }

    private func transportFailed(_ error: any Error, slot: Slot) async throws {
        if error is CancellationError || Task.isCancelled {
            storage.releaseSlot(slot.priority)
            throw GateError.cancelled(name)
        }
        // The transport's own judgement is user code: called here, outside every lock.
        let why: String? =
            if request.sender.transport.classify(error) == .permanent {
                "not retried: the error is permanent"
            } else if let retryRefusal {
                retryRefusal
            } else if !replayable {
                "not retried: its body can be sent only once"
            } else {
                nil
            }
        guard why == nil, sent < budget else {
            storage.releaseSlot(slot.priority)
            throw GateError.transport(name, attempts: sent, error, why: why, status: lastStatus)
        }
        try await backOff(
            releasing: slot.priority, retryAfter: nil, status: lastStatus,
            reason: "transport error: \(TransportErrorText.describe(error))")
    }

    /// Whether one more send is allowed; throws the error that ends the request if not.
    private func mayResend(_ last: @autoclosure () -> String) throws {
        guard sent < budget else {
            throw GateError.retriesExhausted(
                name, attempts: sent, last: last(), status: lastStatus, lastError: lastTransportError)
        }
        guard replayable || sent == 0 else { throw GateError.bodyNotReplayable(name, status: lastStatus) }
    }

    /// Gives the slot back and waits before the next attempt (one transition: the slot, the
    /// jitter, the `retry` event).
    private func backOff(
        releasing slot: RequestPriority, retryAfter: Duration?, status: Int?,
        reason: @autoclosure () -> String
    ) async throws {
        let policy = request.retry
        // The server's wait, unless the policy ignores it (then the schedule's applies).
        var honoured: Duration?
        if let retryAfter, let maximum = policy.retryAfter.maximum {
            guard retryAfter <= maximum else {
                storage.releaseSlot(slot)
                throw GateError.retriesExhausted(
                    name, attempts: sent,
                    last: "Retry-After \(retryAfter.shortDescription) exceeds the cap of \(maximum.shortDescription)",
                    status: status, lastError: lastTransportError)
            }
            honoured = retryAfter
        }
        request.sender.requestLog?.noteRetry(request.id, reason: reason())
        let delay = storage.backOff(
            request: request.id, attempt: sent, retryAfter: honoured, schedule: policy.schedule.retrySchedule,
            slot: slot)
        do {
            try await request.sender.backoffClock.sleep(for: delay)
        } catch {
            throw GateError.cancelled(name)
        }
    }

    private static func retryAfter(in response: HTTPResponse) -> Duration? {
        guard let value = response.headerFields[.retryAfter], let seconds = Int(value), seconds >= 0 else {
            return nil
        }
        return .seconds(seconds)
    }
}
