import Conductor
import ConductorTestKit
import HTTPTypes
import Synchronization

/// An in-memory server with sessions, for the sign-in / sign-out / refresh property tests.
///
/// It accepts only the newest credential it issued, while that is valid; ``expire()`` makes
/// it invalid until the next refresh or sign-in. Credentials come from two places: a refresh
/// (``refresh()``, `r1`, `r2`, …) and a login (``signIn()``, `s1`, `s2`, …). Paths under
/// `/public/` need no credential and always answer 200. Every decision (latency, a 500, a
/// failed refresh) is drawn from the test's seed and the request's path and attempt, so it
/// does not depend on arrival order; latency is spent on the test's `ManualClock`.
final class SessionServer: GateTransport {
    struct Rates: Sendable {
        var serverError = 0.0
        var refreshFailure = 0.0
        var latencyMilliseconds: ClosedRange<Int> = 0...0
    }

    struct Send: Sendable {
        var path: String
        var token: String?
        /// The newest credential the server had issued when the request arrived.
        var newest: String?
        var accepted: Bool
    }

    private struct State {
        var newest: String?
        var valid = true
        var refreshesIssued = 0
        var signIns = 0
        var refreshCalls = 0
        var sends: [Send] = []
        var attemptsPerPath: [String: Int] = [:]
    }

    private let seed: UInt64
    private let rates: Rates
    private let clock: ManualClock
    private let state: Lock<State>

    init(seed: UInt64, rates: Rates, clock: ManualClock, initialToken: String?) {
        self.seed = seed
        self.rates = rates
        self.clock = clock
        self.state = Lock(State(newest: initialToken))
    }

    var sends: [Send] { state.withLock { $0.sends } }
    var refreshesIssued: Int { state.withLock { $0.refreshesIssued } }
    var refreshCalls: Int { state.withLock { $0.refreshCalls } }

    func send(_ request: HTTPRequest, body: GateRequestBody?) async throws -> GateTransportResponse {
        let path = request.path ?? ""
        let token = request.headerFields[.authorization].map { String($0.dropFirst("Bearer ".count)) }
        let attempt = state.withLock { state -> Int in
            state.attemptsPerPath[path, default: 0] += 1
            return state.attemptsPerPath[path]!
        }
        var generator = SeededGenerator(
            seed: seed ^ ChaosTransport.stableHash(path) ^ UInt64(attempt) &* 0x9E37_79B9)
        let latency = Int.random(in: rates.latencyMilliseconds, using: &generator)
        let roll = Double.random(in: 0..<1, using: &generator)
        if latency > 0 { try await clock.sleep(for: .milliseconds(latency)) }
        let isPublic = path.hasPrefix("/public/")
        let status = state.withLock { state -> HTTPResponse.Status in
            // Judged on arrival after the latency: the credential is checked when it is read.
            let accepted = isPublic || (state.valid && token != nil && token == state.newest)
            state.sends.append(Send(path: path, token: token, newest: state.newest, accepted: accepted))
            if isPublic { return .ok }
            if roll < rates.serverError { return .internalServerError }
            return accepted ? .ok : .unauthorized
        }
        return GateTransportResponse(response: HTTPResponse(status: status), body: Array(path.utf8))
    }

    /// Issues the next refresh credential after a seeded latency, unless drawn to fail.
    /// Cancelled during its latency, it issues nothing.
    func refresh() async throws -> String {
        let call = state.withLock { state -> Int in
            state.refreshCalls += 1
            return state.refreshCalls
        }
        try await seededRefreshDelay(
            seed: seed, call: call, latencyMilliseconds: rates.latencyMilliseconds,
            failureRate: rates.refreshFailure, clock: clock)
        return state.withLock { state in
            state.refreshesIssued += 1
            state.newest = "r\(state.refreshesIssued)"
            state.valid = true
            return state.newest!
        }
    }

    /// A login outside the gate: issues the next sign-in credential and makes it the newest.
    func signIn() -> String {
        state.withLock { state in
            state.signIns += 1
            state.newest = "s\(state.signIns)"
            state.valid = true
            return state.newest!
        }
    }

    /// Whether the server accepts `token` now: what an app that knows when its credential
    /// expires would judge before sending it.
    func accepts(_ token: String) -> Bool {
        state.withLock { $0.valid && $0.newest == token }
    }

    /// The newest credential stops being accepted until the next refresh or sign-in.
    func expire() {
        state.withLock { $0.valid = false }
    }
}
