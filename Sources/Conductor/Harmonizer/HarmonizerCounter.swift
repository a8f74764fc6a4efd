import Synchronization

/// A harmonizer's counter: one atomic word, so counting up and down takes no lock.
///
/// Values from zero up are the live count; ``closed``, far below zero, means the outcome is
/// decided (or about to be). Counting is a single atomic add or subtract — what `DispatchGroup` costs — rather
/// than a compare-exchange loop, which retries under contention. The rules that keep it exact:
/// - a count-down that finds the count at zero (or below, while another refused one is being
///   undone) undoes itself and is refused, so the count never stays negative;
/// - the count-down that takes it from 1 to 0 then closes it with a compare-exchange from 0,
///   waiting out a refused count-down's transient −1; if an arrival got in first, the count is
///   live again and the last of those count-downs will close it instead;
/// - once closed, adds and subtracts leave the word far below zero (it would take 2^61 of them
///   to come back), so every later count is refused.
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

    private static let closed = -(1 << 62)
    /// At or below this the counter is closed; between it and zero a refused count-down is undoing itself.
    private static let closedThreshold = -(1 << 61)
    /// Arrivals are refused from here on.
    private static let maximumCount = 1 << 61

    private let word: Atomic<Int>

    init(_ initialCount: Int) {
        word = Atomic(min(initialCount, Self.maximumCount))
    }

    /// The live count; zero once closed.
    var value: Int {
        let current = word.load(ordering: .relaxed)
        return max(0, current)
    }

    var isClosed: Bool { word.load(ordering: .acquiring) <= Self.closedThreshold }

    /// Counts one up. Returns the new count, or `nil` when closed or at the maximum.
    func increment() -> Int? {
        let old = word.wrappingAdd(1, ordering: .acquiringAndReleasing).oldValue
        if old <= Self.closedThreshold { return nil }
        if old >= Self.maximumCount {
            word.wrappingSubtract(1, ordering: .relaxed)
            return nil
        }
        return max(1, old + 1)
    }

    /// Counts one down, never below zero and never after the close.
    func decrement() -> Decrement {
        // Acquire-release so whoever completes sees every stash made before each count-down.
        let old = word.wrappingSubtract(1, ordering: .acquiringAndReleasing).oldValue
        if old <= Self.closedThreshold { return .refusedClosed }
        if old <= 0 {
            word.wrappingAdd(1, ordering: .relaxed)
            return .refusedAtZero
        }
        if old > 1 { return .decremented(remaining: old - 1) }
        while true {
            let current = word.load(ordering: .acquiring)
            if current > 0 { return .decremented(remaining: 0) }  // an arrival got in first
            if current <= Self.closedThreshold { return .refusedClosed }  // a timeout or cancel did
            if current < 0 { continue }  // a refused count-down is undoing itself
            let (exchanged, _) = word.compareExchange(
                expected: 0,
                desired: Self.closed,
                successOrdering: .acquiringAndReleasing,
                failureOrdering: .relaxed
            )
            if exchanged { return .reachedZero }
        }
    }

    /// Closes the counter for a timeout or cancellation; later counts are refused.
    func close() {
        word.store(Self.closed, ordering: .releasing)
    }
}
