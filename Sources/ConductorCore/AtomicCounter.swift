public import Synchronization

/// A counter any thread can draw fresh numbers from without a lock.
@usableFromInline package final class AtomicCounter: Sendable {
    @usableFromInline let value = Atomic<UInt64>(0)

    @inlinable package init() {}

    /// A number no other call returned.
    @inlinable package func next() -> UInt64 {
        value.wrappingAdd(1, ordering: .relaxed).oldValue
    }
}
