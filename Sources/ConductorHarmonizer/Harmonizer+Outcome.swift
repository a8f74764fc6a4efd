extension Harmonizer {
    /// How a ``Harmonizer`` ended. It ends exactly once, however completion, timeout and
    /// cancellation race:
    ///
    /// ```swift
    /// switch await harmonizer.outcome {
    /// case .completed(let stash):
    ///     showSingAlong(song: stash[.originalSong])
    /// case .timedOut(_, let missing):
    ///     showRetry(waitingFor: missing)  // for example ["lead-song"]
    /// case .cancelled:
    ///     break
    /// }
    /// ```
    public enum Outcome: Sendable, CustomStringConvertible {
        /// The count reached zero; the stash holds everything participants stashed.
        case completed(HarmonizerStash)
        /// The timeout passed first. The stash holds what was stashed in time; `missing`
        /// names, sorted, the participants that arrived by name and never left (a name
        /// that arrived twice and left once appears once).
        case timedOut(HarmonizerStash, missing: [String])
        /// ``Harmonizer/cancel()`` was called first; nothing stashed is kept.
        case cancelled

        /// The outcome without its stash: what a test compares, since stashed values need
        /// not be `Equatable`.
        ///
        /// ```swift
        /// #expect(await harmonizer.outcome.kind == .timedOut(missing: ["feed"]))
        /// ```
        public var kind: Kind {
            switch self {
            case .completed: .completed
            case .timedOut(_, let missing): .timedOut(missing: missing)
            case .cancelled: .cancelled
            }
        }

        /// A ``Harmonizer/Outcome`` without its stash.
        public enum Kind: Hashable, Sendable {
            case completed
            case timedOut(missing: [String])
            case cancelled
        }

        /// The stashed values, or `nil` when cancelled.
        public var stash: HarmonizerStash? {
            switch self {
            case .completed(let stash), .timedOut(let stash, _): stash
            case .cancelled: nil
            }
        }

        public var description: String {
            switch self {
            case .completed(let stash): "completed(\(stash.count) stashed)"
            case .timedOut(let stash, let missing):
                "timedOut(\(stash.count) stashed, missing: \(missing.joined(separator: ", ")))"
            case .cancelled: "cancelled"
            }
        }
    }
}
