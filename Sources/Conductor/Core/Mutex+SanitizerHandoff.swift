package import Synchronization

/// An atomic that tells ThreadSanitizer what a `Mutex` hand-over already guarantees.
///
/// NB: on Linux, `Mutex` hands a contended lock to the next holder inside its futex slow
/// path, which is compiled into the standard library without sanitizer instrumentation, so
/// ThreadSanitizer sees no happens-before edge between the two holders and reports their
/// perfectly ordered accesses to the protected state as data races. An acquiring load when
/// entering and a releasing store when leaving the critical section give it that edge.
/// They are plain moves on x86-64 and cheap elsewhere, and change nothing about ordering
/// (the mutex already provides it). Keep one per mutex, next to it:
///
/// ```swift
/// private let state = Mutex(State())
/// private let handoff = SanitizerHandoff()
///
/// state.withLock(handoff: handoff) { $0.count += 1 }
/// ```
package struct SanitizerHandoff: ~Copyable, Sendable {
    private let word = Atomic<Int>(0)

    package init() {}

    fileprivate func entered() {
        _ = word.load(ordering: .acquiring)
    }

    fileprivate func leaving() {
        word.store(0, ordering: .releasing)
    }
}

extension Mutex where Value: ~Copyable {
    /// `withLock(_:)`, with the hand-over between holders made visible to ThreadSanitizer.
    package borrowing func withLock<Result: ~Copyable, E: Error>(
        handoff: borrowing SanitizerHandoff,
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        try withLock { (value: inout sending Value) throws(E) -> sending Result in
            handoff.entered()
            defer { handoff.leaving() }
            return try body(&value)
        }
    }
}
