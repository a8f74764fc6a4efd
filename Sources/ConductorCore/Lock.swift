public import Synchronization

/// A `Mutex` whose hand-overs ThreadSanitizer can see, and which debug builds check is never
/// taken while the same thread holds another. Every lock in Conductor is one.
///
/// NB: on Linux, `Synchronization.Mutex` hands a contended lock to the next holder inside
/// its futex slow path, which is compiled into the standard library without sanitizer
/// instrumentation. ThreadSanitizer then sees no happens-before edge between two holders
/// and reports their perfectly ordered accesses as data races (a four-task array append
/// under a bare `Mutex` reproduces it). An acquiring load on entry and a releasing store on
/// exit, compiled into our own code, give it that edge. They are plain moves on x86-64 and
/// change nothing about ordering: the mutex already provides it.
///
/// One lock at a time: code that holds a lock computes what to do and does it after releasing
/// it, so no two locks are ever ordered against each other and no lock order can deadlock.
/// Debug builds trap when a thread takes a lock while it holds another (see `LockNesting`),
/// naming where both were made; release builds carry no trace of the check.
///
/// ```swift
/// let state = Lock(State())
/// state.withLock { $0.count += 1 }
/// ```
@usableFromInline package struct Lock<Value: ~Copyable>: ~Copyable, Sendable {
    @usableFromInline let mutex: Mutex<Value>
    @usableFromInline let handoff = Atomic<Int>(0)
    #if DEBUG
        @usableFromInline let site: LockSite
    #endif

    #if DEBUG
        @inlinable package init(
            _ initialValue: consuming sending Value, fileID: StaticString = #fileID, line: UInt = #line
        ) {
            mutex = Mutex(initialValue)
            site = LockSite(fileID: fileID, line: line)
        }
    #else
        @inlinable package init(_ initialValue: consuming sending Value) {
            mutex = Mutex(initialValue)
        }
    #endif

    /// Runs `body` with exclusive access to the value. Never call user code or resume a
    /// continuation inside `body`, and never take another lock there.
    @inlinable package borrowing func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        #if DEBUG
            // Checked before waiting for the mutex: a nesting that would deadlock traps instead.
            let outer = LockNesting.acquiring(site, checked: true)
            defer { LockNesting.released(restoring: outer) }
        #endif
        return try mutex.withLock { (value: inout sending Value) throws(E) -> sending Result in
            _ = handoff.load(ordering: .acquiring)
            defer { handoff.store(0, ordering: .releasing) }
            return try body(&value)
        }
    }

    /// Runs `body` if the lock is free; returns `nil` at once if any thread holds it, the
    /// calling one included. Test hooks use it to prove no lock is held around user code.
    /// Trying never waits, so it is not checked against locks already held; while it holds
    /// the lock, taking another is checked like any nesting.
    @inlinable package borrowing func withLockIfAvailable<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result? {
        try mutex.withLockIfAvailable { (value: inout sending Value) throws(E) -> sending Result in
            #if DEBUG
                let outer = LockNesting.acquiring(site, checked: false)
                defer { LockNesting.released(restoring: outer) }
            #endif
            _ = handoff.load(ordering: .acquiring)
            defer { handoff.store(0, ordering: .releasing) }
            return try body(&value)
        }
    }
}
