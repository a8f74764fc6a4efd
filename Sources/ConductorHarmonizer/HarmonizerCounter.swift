import Synchronization

/// A harmonizer's counter: one atomic word, so counting up and down takes no lock.
///
/// Values from zero up are the live count; ``closed``, far below zero, means the outcome is
/// decided (or about to be). Counting is a single atomic add or subtract — what `DispatchGroup`
/// costs — rather than a compare-exchange loop, which retries under contention, and a count-down
/// that leaves participants expected takes one branch after it. The rules that keep it exact:
/// - a count-down that finds the count at zero (or below, while another refused one is being
///   undone) undoes itself and is refused, so the count never stays negative;
/// - the count-down that takes it from 1 to 0 then closes it with a compare-exchange from 0,
///   waiting out a refused count-down's transient −1; if an arrival got in first, the count is
///   live again and the last of those count-downs will close it instead;
/// - once closed, a count that finds the word at or below ``closedThreshold`` undoes itself and
///   is refused, so however many late counts arrive, the word strays from ``closed`` by no more
///   than the counts in flight at that moment, and every later count is refused.
///
/// The constants come from the word's width (``Limits``), so a 32-bit `Int` (watchOS on
/// arm64_32) gets the same layout as a 64-bit one, scaled down.
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

    /// The atomic word: `Int`, whose atomics are lock-free on every platform the package supports.
    typealias Word = Int

    private static var closed: Word { Limits<Word>.closed }
    /// At or below this the counter is closed; between it and zero a refused count-down is undoing itself.
    private static var closedThreshold: Word { Limits<Word>.closedThreshold }
    /// Arrivals are refused from here on.
    private static var maximumCount: Word { Limits<Word>.maximumCount }

    /// The word alone on its cache line: two threads counting down hand the line to each
    /// other at every count, and a field read beside it (``Harmonizer``'s
    /// `waitsForNamedParticipants`, just before the subtract; the object's reference count)
    /// would make each count fetch the line twice, shared for the read and then exclusive for
    /// the subtract. 64 bytes on each side, as the registry's stamp has: 128 bytes a harmonizer.
    private let paddingBefore = CacheLinePadding()
    private let word: Atomic<Word>
    private let paddingAfter = CacheLinePadding()

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
        if old <= Self.closedThreshold {
            // Undone, so late arrivals cannot walk a closed word up to the threshold: at 32 bits
            // that would take only 2^29 of them.
            word.wrappingSubtract(1, ordering: .relaxed)
            return nil
        }
        if old >= Self.maximumCount {
            word.wrappingSubtract(1, ordering: .relaxed)
            return nil
        }
        return max(1, old + 1)
    }

    /// Counts one down, never below zero and never after the close.
    @inline(__always)
    func decrement() -> Decrement {
        let old = subtract()
        if old > 1 { return .decremented(remaining: old - 1) }
        return decrement(from: old)
    }

    /// The atomic subtract of a count-down; returns the count before it. Above 1, that is the
    /// whole count-down — the atomic and one branch, what `DispatchGroup.leave()` costs —
    /// and the caller says so itself; otherwise it finishes with ``decrement(from:)``, which
    /// a caller keeps out of line so the common path saves no registers.
    @inline(__always)
    func subtract() -> Word {
        // Releasing, as `DispatchGroup.leave()`: whatever a participant did before it counted
        // down is published with it. The count-down that completes acquires (below), so it sees
        // all of it; those that do not complete read nothing.
        word.wrappingSubtract(1, ordering: .releasing).oldValue
    }

    /// The rest of a count-down whose ``subtract()`` found the count at 1 (it may complete),
    /// at zero or closed.
    func decrement(from old: Word) -> Decrement {
        if old <= Self.closedThreshold {
            // Undone, so late count-downs cannot walk a closed word past `Word.min` and around.
            word.wrappingAdd(1, ordering: .relaxed)
            return .refusedClosed
        }
        if old <= 0 {
            word.wrappingAdd(1, ordering: .relaxed)
            return .refusedAtZero
        }
        // From 1 to 0: every count-down before this one released into the word's chain of
        // read-modify-writes; acquire it, so whoever completes sees each one's work.
        atomicMemoryFence(ordering: .acquiring)
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

extension HarmonizerCounter {
    /// The counter's constants for a word of `Word.bitWidth` bits (w): ``closed`` is −2^(w−2),
    /// ``closedThreshold`` −2^(w−3) and ``maximumCount`` 2^(w−3). Derived, not literal:
    /// `1 << 62` is 0 with a 32-bit `Int` and would start every harmonizer closed.
    ///
    /// Every gap between them, and between them and the ends of `Word`'s range, is at least
    /// 2^(w−3) (2^29 at 32 bits), and the word moves into a gap only by counts in flight that
    /// undo themselves, at most one per thread. Generic so a test can check the relations at
    /// 32 and 64 bits on a host that has only one of them.
    enum Limits<Word: FixedWidthInteger & SignedInteger> {
        static var closed: Word { -(1 << (Word.bitWidth - 2)) }
        static var closedThreshold: Word { -(1 << (Word.bitWidth - 3)) }
        static var maximumCount: Word { 1 << (Word.bitWidth - 3) }
    }
}
