/// An outcome decided exactly once: the first ``settle(_:)`` wins, every later one is refused.
///
/// A value kept in a state machine's state, so whichever transition comes first — the work's
/// end, a cancellation, a deadline, a shutdown — settles it under the owner's one lock, and
/// what the caller is told and what the journal records are the same outcome.
///
/// ```swift
/// var end = Settlement<Result<Int, any Error>>()
/// end.settle(.success(200))            // true: this is the outcome
/// end.settle(.failure(CancellationError()))  // false: too late, nothing changes
/// ```
@usableFromInline package struct Settlement<Outcome> {
    @usableFromInline package private(set) var outcome: Outcome?

    @inlinable package init() {}

    @inlinable package var isSettled: Bool { outcome != nil }

    /// Settles with `outcome` if nothing did yet; returns whether this call did.
    @discardableResult
    @inlinable package mutating func settle(_ outcome: Outcome) -> Bool {
        guard self.outcome == nil else { return false }
        self.outcome = outcome
        return true
    }
}

extension Settlement: Sendable where Outcome: Sendable {}
