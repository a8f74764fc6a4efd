package import CoreMetrics

/// A gauge whose last recorded value is the newest one offered, however the tasks that offer
/// values interleave.
///
/// The owner numbers each value under its own lock (the gate numbers its queue depth in the
/// transition that changed it) and offers it once that lock is released, so offers arrive in
/// any order. A value older than one offered already is dropped. One offerer at a time records
/// — outside this gauge's lock, because the recorder is user code (a `MetricsFactory`'s) — and
/// records again, before it returns, the newest value offered while it was recording. So the
/// last value the backend sees is the newest, and no offerer ever waits for another's recorder.
/// Values superseded while one records are skipped, which a gauge may do. The offerer that
/// records keeps recording while newer values keep arriving faster than its recorder returns:
/// the recording work is never more than the offers, but it can fall to one offerer.
///
/// - Complexity: O(1) per offer; one lock acquisition, two when it records.
package final class SequencedGauge: Sendable {
    private struct State {
        /// The highest number offered so far.
        package var newest: UInt64 = 0
        /// Offered while another offerer recorded, for it to record next.
        package var pending: Int?
        package var recording = false
    }

    private let gauge: Gauge
    private let state = Lock(State())

    /// `initial` is recorded at once, as number 0.
    package init(_ gauge: Gauge, initial: Int) {
        self.gauge = gauge
        gauge.record(initial)
    }

    /// Offers `value`, numbered `sequence` (1 and up, increasing with each change).
    package func offer(_ value: Int, sequence: UInt64) {
        var next = state.withLock { state -> Int? in
            guard sequence > state.newest else { return nil }
            state.newest = sequence
            guard !state.recording else {
                state.pending = value
                return nil
            }
            state.recording = true
            return value
        }
        while let value = next {
            gauge.record(value)
            next = state.withLock { state -> Int? in
                guard let pending = state.pending else {
                    state.recording = false
                    return nil
                }
                state.pending = nil
                return pending
            }
        }
    }
}
