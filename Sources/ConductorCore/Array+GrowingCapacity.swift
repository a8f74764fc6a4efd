extension Array {
    /// Reserves room for `count` elements, at least doubling the capacity when it must grow:
    /// an owner that adds a few elements at a time (a launcher adding a task to its run) then
    /// copies its storage a logarithmic number of times, not on every addition.
    @inlinable package mutating func reserveCapacity(growingToHold count: Int) {
        guard count > capacity else { return }
        reserveCapacity(Swift.max(count, 2 * capacity))
    }
}

extension Dictionary {
    /// ``Swift/Array/reserveCapacity(growingToHold:)`` for a dictionary.
    @inlinable package mutating func reserveCapacity(growingToHold count: Int) {
        guard count > capacity else { return }
        reserveCapacity(Swift.max(count, 2 * capacity))
    }
}
