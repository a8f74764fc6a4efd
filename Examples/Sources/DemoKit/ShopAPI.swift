import Conductor
import ConductorURLSession
import HTTPTypes

/// The shop's API as the page sees it: every call goes through one ``RequestGate`` on the
/// chosen mirror, in the lane its importance gives it, with the token refreshed once when it
/// expires.
final class ShopAPI: Sendable {
    let gate: RequestGate<String>
    let authority: String
    private let logging: Task<Void, Never>
    private let open = OpenRequests()

    init(
        authority: String, token: String, cache: ResponseStore, options: DemoOptions, recorder: Recorder,
        telemetry: Telemetry
    ) throws(GateError) {
        let transport = DemoTransport(base: URLSessionTransport())
        var configuration = GateConfiguration(
            maxConcurrentRequests: 6,  // a browser's per-host limit, so the lanes matter
            retry: .automatic(.attempts(3, backoff: options.scaled(.milliseconds(100)))),
            refreshTimeout: options.scaled(.seconds(3)),
            jitterSeed: options.seed
        )
        configuration.eventRetention = 10_000
        configuration.telemetry = telemetry
        self.authority = authority
        self.gate = try RequestGate(
            transport: transport,
            credential: token,
            configuration: configuration,
            cache: cache,
            authorize: { request, token in request.headerFields[.authorization] = "Bearer \(token)" },
            refresh: { _ in
                // Straight to the transport: a refresh sent through the gate would wait for itself.
                let request = HTTPRequest(method: .post, scheme: "http", authority: authority, path: "/token")
                let reply = try await transport.send(request, body: .bytes([]))
                let (response, body) = (reply.response, reply.body)
                guard response.status == .ok else { throw RefreshRefused(status: response.status.code) }
                return String(decoding: body, as: UTF8.self)
            }
        )
        let gate = self.gate
        let open = self.open
        recorder.attachGate { gate.recordedEvents }
        self.logging = Task {
            for await event in gate.events {
                recorder.catchUpWithGate()
                open.count(event)
            }
        }
    }

    /// Sends one of the page's calls.
    func get(_ call: PageCall) async throws(GateError) -> GateResponse {
        let request = HTTPRequest(method: .get, scheme: "http", authority: authority, path: call.path)
        return try await gate.send(request, priority: call.importance.lane, coalescingKey: call.coalescingKey)
    }

    /// Waits until every request that entered the gate has logged its ending — a request's
    /// last event can trail its caller's return — then ends the gate and its event stream.
    /// The wait is bounded, so a request that never ended shows up in the summary instead of
    /// hanging the demo.
    func close(within limit: Duration = .seconds(2)) async {
        await open.settled(within: limit)
        gate.shutdown()
        await logging.value
    }
}

/// The token server refused to refresh: the login itself has expired.
struct RefreshRefused: Error, CustomStringConvertible {
    let status: Int
    var description: String { "the token server answered \(status)" }
}

extension CallImportance {
    /// The request gate's lane for this importance.
    var lane: RequestPriority {
        switch self {
        case .high: .high
        case .normal: .default
        case .low: .low
        }
    }
}

/// Counts requests that entered the gate and have not logged their ending yet.
final class OpenRequests: Sendable {
    private struct State {
        var open = 0
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Guarded(State())

    func count(_ event: GateEvent) {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            switch event {
            case .initial: state.open += 1
            case .success, .failure, .useCache: state.open -= 1
            default: break
            }
            guard state.open == 0 else { return [] }
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in ready { waiter.resume() }
    }

    /// Returns once no request is open, or after `limit`.
    func settled(within limit: Duration) async {
        let timer = Task {
            try? await Task.sleep(for: limit)
            let waiters = state.withLock { state in
                defer { state.waiters.removeAll() }
                return state.waiters
            }
            for waiter in waiters { waiter.resume() }
        }
        await withCheckedContinuation { continuation in
            let done = state.withLock { state in
                if state.open == 0 { return true }
                state.waiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
        timer.cancel()
    }
}
