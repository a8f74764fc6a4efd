/// Durations as the `Int64` nanoseconds that metrics and span attributes take.
extension Duration {
    /// Whole nanoseconds, saturating; an `Int64` whatever the width of `Int`.
    @inlinable package var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return seconds < 0 ? .min : .max }
        let (sum, overflowed) = whole.addingReportingOverflow(attoseconds / 1_000_000_000)
        return overflowed ? (whole < 0 ? .min : .max) : sum
    }
}
