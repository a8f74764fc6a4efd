import Synchronization

/// A `Mutex` whose hand-overs ThreadSanitizer can see. Every lock in Conductor is one.
///
/// NB: on Linux, `Synchronization.Mutex` hands a contended lock to the next holder inside
/// its futex slow path, which is compiled into the standard library without sanitizer
/// instrumentation. ThreadSanitizer then sees no happens-before edge between two holders
/// and reports their perfectly ordered accesses as data races (a four-task array append
/// under a bare `Mutex` reproduces it). An acquiring load on entry and a releasing store on
/// exit, compiled into our own code, give it that edge. They are plain moves on x86-64 and
/// change nothing about ordering: the mutex already provides it.
///
/// ```swift
/// let state = Lock(State())
/// state.withLock { $0.count += 1 }
/// ```
package struct Lock<Value: ~Copyable>: ~Copyable, Sendable {
    private let mutex: Mutex<Value>
    private let handoff = Atomic<Int>(0)

    package init(_ initialValue: consuming sending Value) {
        mutex = Mutex(initialValue)
    }

    /// Runs `body` with exclusive access to the value. Never call user code or resume a
    /// continuation inside `body`.
    package borrowing func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        try mutex.withLock { (value: inout sending Value) throws(E) -> sending Result in
            _ = handoff.load(ordering: .acquiring)
            defer { handoff.store(0, ordering: .releasing) }
            return try body(&value)
        }
    }

    /// Runs `body` if the lock is free; returns `nil` at once if any thread holds it, the
    /// calling one included. Test hooks use it to prove no lock is held around user code.
    package borrowing func withLockIfAvailable<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result? {
        try mutex.withLockIfAvailable { (value: inout sending Value) throws(E) -> sending Result in
            _ = handoff.load(ordering: .acquiring)
            defer { handoff.store(0, ordering: .releasing) }
            return try body(&value)
        }
    }
}
