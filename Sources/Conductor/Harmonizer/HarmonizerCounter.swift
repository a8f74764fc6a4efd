import Synchronization

/// A harmonizer's counter: one atomic word, so counting up and down takes no lock.
///
/// Values from zero up are the live count; ``closed`` means the outcome is decided (or
/// about to be). Every change is a compare-exchange from a value seen, so a count-down
/// at zero or after the close is refused instead of going negative, and exactly one
/// count-down — the one that moves 1 to ``closed`` — sees the count reach zero.
struct HarmonizerCounter: ~Copyable, Sendable {
    /// What a count-down did.
    enum Decrement: Equatable {
        /// Counted; `remaining` participants are still expected.
        case decremented(remaining: Int)
        /// This count-down took the counter to zero and closed it: it must complete the harmonizer.
        case reachedZero
        /// Refused: the counter is at zero and still open (nobody is expected).
        case refusedAtZero
        /// Refused: the outcome is decided.
        case refusedClosed
    }

    private static let closed = -1

    private let word: Atomic<Int>

    init(_ initialCount: Int) {
        word = Atomic(initialCount)
    }

    /// The live count; zero once closed.
    var value: Int { max(0, word.load(ordering: .relaxed)) }

    var isClosed: Bool { word.load(ordering: .acquiring) == Self.closed }

    /// Counts one up. Returns the new count, or `nil` when closed or already at `Int.max`
    /// (refused rather than overflowing).
    func increment() -> Int? {
        var current = word.load(ordering: .relaxed)
        while current != Self.closed, current < Int.max {
            let (exchanged, original) = word.compareExchange(
                expected: current,
                desired: current + 1,
                successOrdering: .acquiringAndReleasing,
                failureOrdering: .relaxed
            )
            if exchanged { return current + 1 }
            current = original
        }
        return nil
    }

    /// Counts one down, never below zero and never after the close.
    func decrement() -> Decrement {
        var current = word.load(ordering: .relaxed)
        while true {
            if current == Self.closed { return .refusedClosed }
            if current == 0 { return .refusedAtZero }
            // Going from 1 straight to `closed` (not to 0) is what stops a racing
            // increment from reviving a harmonizer that is about to complete.
            let desired = current == 1 ? Self.closed : current - 1
            // Acquire-release so whoever completes sees every stash made before each count-down.
            let (exchanged, original) = word.compareExchange(
                expected: current,
                desired: desired,
                successOrdering: .acquiringAndReleasing,
                failureOrdering: .relaxed
            )
            if exchanged { return current == 1 ? .reachedZero : .decremented(remaining: current - 1) }
            current = original
        }
    }

    /// Closes the counter for a timeout or cancellation; later counts are refused.
    func close() {
        word.store(Self.closed, ordering: .releasing)
    }
}
