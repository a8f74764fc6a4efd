import Conductor
import ConductorTestKit
import HTTPTypes
import Synchronization

/// An in-memory server that misbehaves on purpose, for the gate's property tests.
///
/// Every decision (latency, fault, Retry-After) is drawn from a generator seeded with the test's
/// seed, the request's `X-Tag` and the attempt's number for that tag, so it does not depend on
/// the order in which attempts happen to arrive. Latency is spent on the test's `ManualClock`.
/// It issues tokens `t1`, `t2`, … through ``refresh()``, accepts only the newest while it is
/// valid, and records every send whose token was not the newest issued: a stale send.
final class ChaosTransport: GateTransport {
    struct Rates: Sendable {
        var unauthorized = 0.0
        var tooManyRequests = 0.0
        var serverError = 0.0
        /// Throws instead of answering: the connection dropped.
        var drop = 0.0
        var refreshFailure = 0.0
        var latencyMilliseconds: ClosedRange<Int> = 0...0
        var retryAfterSeconds: [Int] = [0]
    }

    struct Send: Sendable {
        var tag: String
        var token: String?
        var newest: String
    }

    private struct State {
        var issued = 0
        var valid = true
        var sends: [Send] = []
        var attemptsPerTag: [String: Int] = [:]
        var refreshCalls = 0
    }

    static let tag = HTTPField.Name("X-Tag")!

    private let seed: UInt64
    private let rates: Rates
    private let clock: ManualClock
    private let state = Lock(State())

    init(seed: UInt64, rates: Rates, clock: ManualClock) {
        self.seed = seed
        self.rates = rates
        self.clock = clock
    }

    var sends: [Send] { state.withLock { $0.sends } }
    var refreshCalls: Int { state.withLock { $0.refreshCalls } }
    var issued: Int { state.withLock { $0.issued } }

    func send(_ request: HTTPRequest, body: GateRequestBody?) async throws -> GateTransportResponse {
        let tag = request.headerFields[Self.tag] ?? "untagged"
        let token = request.headerFields[.authorization].map { String($0.dropFirst("Bearer ".count)) }
        let attempt = state.withLock { state -> Int in
            state.sends.append(Send(tag: tag, token: token, newest: "t\(state.issued)"))
            state.attemptsPerTag[tag, default: 0] += 1
            return state.attemptsPerTag[tag]!
        }
        var generator = SeededGenerator(seed: seed ^ Self.stableHash(tag) ^ UInt64(attempt) &* 0x9E37_79B9)
        let latency = Int.random(in: rates.latencyMilliseconds, using: &generator)
        let retryAfter = rates.retryAfterSeconds.randomElement(using: &generator) ?? 0
        let roll = Double.random(in: 0..<1, using: &generator)
        if latency > 0 { try await clock.sleep(for: .milliseconds(latency)) }
        var threshold = rates.drop
        if roll < threshold { throw TransportDown() }
        threshold += rates.serverError
        if roll < threshold {
            return GateTransportResponse(response: HTTPResponse(status: .internalServerError), body: [])
        }
        threshold += rates.tooManyRequests
        if roll < threshold {
            var response = HTTPResponse(status: .tooManyRequests)
            response.headerFields[.retryAfter] = "\(retryAfter)"
            return GateTransportResponse(response: response, body: [])
        }
        threshold += rates.unauthorized
        let accepted = state.withLock { state -> Bool in
            // The token expires under this request.
            if roll < threshold { state.valid = false }
            return state.valid && token != nil && token == "t\(state.issued)"
        }
        guard accepted else { return GateTransportResponse(response: HTTPResponse(status: .unauthorized), body: []) }
        return GateTransportResponse(response: HTTPResponse(status: .ok), body: Array(tag.utf8))
    }

    /// Issues the next token, after a seeded latency, unless this refresh is drawn to fail.
    func refresh() async throws -> String {
        let call = state.withLock { state -> Int in
            state.refreshCalls += 1
            return state.refreshCalls
        }
        try await seededRefreshDelay(
            seed: seed, call: call, latencyMilliseconds: rates.latencyMilliseconds,
            failureRate: rates.refreshFailure, clock: clock)
        return state.withLock { state in
            state.issued += 1
            state.valid = true
            return "t\(state.issued)"
        }
    }

    /// FNV-1a: `Hasher` is seeded per process, which would make runs unreplayable.
    static func stableHash(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x100_0000_01B3
        }
        return hash
    }
}

/// What a fake server's refresh number `call` does, drawn from `seed`: it waits a latency from
/// `latencyMilliseconds` on `clock`, then fails with a 500 at `failureRate`. The same draw for
/// every fake, so a seed replays the same refreshes whichever one a test uses.
func seededRefreshDelay(
    seed: UInt64, call: Int, latencyMilliseconds: ClosedRange<Int>, failureRate: Double, clock: ManualClock
) async throws {
    var generator = SeededGenerator(seed: seed ^ 0x5EED_F00D ^ UInt64(call) &* 0x9E37_79B9)
    let latency = Int.random(in: latencyMilliseconds, using: &generator)
    if latency > 0 { try await clock.sleep(for: .milliseconds(latency)) }
    if Double.random(in: 0..<1, using: &generator) < failureRate { throw RefreshRejected(status: 500) }
}
