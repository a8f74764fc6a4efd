import CoreMetrics
import Testing

@testable import ConductorAssembly
@testable import ConductorCore
@testable import ConductorGate
@testable import ConductorGraph
@testable import ConductorHarmonizer
@testable import ConductorLaunch
@testable import ConductorReports

/// The gauge behind `conductor_gate_queue_depth`: values are offered after the gate's lock is
/// released, so in any order, and the last one the backend sees must be the newest.
@Suite struct SequencedGaugeTests {
    /// The interleaving that left the gate's gauge stale: the transition that changed the depth
    /// last is told first, the earlier one's older value arrives after it and is dropped.
    @Test func anOlderValueOfferedLastIsDropped() {
        let handler = HookedRecorder()
        let gauge = SequencedGauge(Gauge(label: "depth", factory: HookedFactory(handler)), initial: 0)
        gauge.offer(47, sequence: 1)
        gauge.offer(0, sequence: 3)
        gauge.offer(12, sequence: 2)
        #expect(handler.values.all == [0, 47, 0])
    }

    /// A value offered while another offerer is inside the backend's recorder (user code) is
    /// recorded by that offerer before it returns, after its own: the newest is recorded last,
    /// and the recorder is never called under the gauge's lock (the nested offer would trap).
    @Test func aValueOfferedWhileAnotherRecordsIsRecordedLast() {
        let handler = HookedRecorder()
        let gauge = SequencedGauge(Gauge(label: "depth", factory: HookedFactory(handler)), initial: 0)
        handler.onRecord = { value in
            if value == 5 { gauge.offer(2, sequence: 2) }
        }
        gauge.offer(5, sequence: 1)
        #expect(handler.values.all == [0, 5, 2])
    }
}

/// A gauge's handler that keeps what it is given, then calls `onRecord` with it.
private final class HookedRecorder: RecorderHandler, Sendable {
    let values = Recorder<Int64>()
    private let hook = Lock<(@Sendable (Int64) -> Void)?>(nil)

    var onRecord: (@Sendable (Int64) -> Void)? {
        get { hook.withLock { $0 } }
        set { hook.withLock { $0 = newValue } }
    }

    func record(_ value: Int64) {
        values.append(value)
        onRecord?(value)
    }

    func record(_ value: Double) { record(Int64(value)) }
}

/// Makes every recorder `HookedRecorder`'s one; nothing else is used.
private struct HookedFactory: MetricsFactory {
    let recorder: HookedRecorder

    init(_ recorder: HookedRecorder) { self.recorder = recorder }

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        NOOPMetricsHandler.instance
    }

    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        recorder
    }

    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler { NOOPMetricsHandler.instance }

    func destroyCounter(_ handler: any CounterHandler) {}
    func destroyRecorder(_ handler: any RecorderHandler) {}
    func destroyTimer(_ handler: any TimerHandler) {}
}
