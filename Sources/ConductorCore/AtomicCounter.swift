import Synchronization

/// A counter any thread can draw fresh numbers from without a lock.
package final class AtomicCounter: Sendable {
    private let value = Atomic<UInt64>(0)

    package init() {}

    /// A number no other call returned.
    package func next() -> UInt64 {
        value.wrappingAdd(1, ordering: .relaxed).oldValue
    }
}
