import Conductor

/// A ledger of units of work that fails a test when anything ends twice, ends without being
/// expected, or never ends.
///
/// Expect each unit when it starts, record each end, and check when everything has settled.
/// The ledger depends on no test framework: with XCTest, assert that ``violations`` is empty;
/// with Swift Testing, `verify()` records an `Issue` for each violation.
///
/// ```swift
/// let ledger = OutcomeLedger<Int>()
/// let sends = (0..<100).map { request in
///     ledger.expect(request)
///     return Task {
///         let sent = (try? await gate.send(feedRequest)) != nil
///         ledger.record(request, sent ? "sent" : "failed")
///     }
/// }
/// for send in sends { await send.value }
/// ledger.verify()   // Swift Testing: an Issue for each unit that ended twice or never
/// // XCTest: XCTAssertEqual(ledger.violations, [])
/// ```
public final class OutcomeLedger<ID: Hashable & Sendable & CustomStringConvertible>: Sendable {
    /// Something the ledger found wrong.
    public enum Violation: Hashable, Sendable, CustomStringConvertible {
        case endedTwice(ID, first: String, second: String)
        case neverEnded(ID)
        case unexpected(ID, outcome: String)

        public var description: String {
            switch self {
            case .endedTwice(let id, let first, let second): "\(id) ended twice: '\(first)', then '\(second)'"
            case .neverEnded(let id): "\(id) never ended"
            case .unexpected(let id, let outcome): "\(id) ended ('\(outcome)') but was never expected"
            }
        }
    }

    private struct State {
        var expected: Set<ID> = []
        var outcomes: [ID: String] = [:]
        var violations: [Violation] = []
    }

    private let state = Lock(State())

    public init() {}

    /// Declares a unit of work that must end exactly once.
    public func expect(_ id: ID) {
        state.withLock { _ = $0.expected.insert(id) }
    }

    /// Records that `id` ended with `outcome`.
    public func record(_ id: ID, _ outcome: String) {
        state.withLock { state in
            if !state.expected.contains(id) {
                state.violations.append(.unexpected(id, outcome: outcome))
            } else if let first = state.outcomes[id] {
                state.violations.append(.endedTwice(id, first: first, second: outcome))
            } else {
                state.outcomes[id] = outcome
            }
        }
    }

    /// The outcome recorded for `id`, if it has ended.
    public func outcome(of id: ID) -> String? {
        state.withLock { $0.outcomes[id] }
    }

    /// How many expected units have ended.
    public var endedCount: Int { state.withLock { $0.outcomes.count } }

    /// Everything wrong so far, including units that have not ended yet.
    public var violations: [Violation] {
        state.withLock { state in
            state.violations + state.expected.subtracting(state.outcomes.keys).map { .neverEnded($0) }
        }
    }
}
