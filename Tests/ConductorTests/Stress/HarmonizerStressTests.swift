import Conductor
import ConductorTestKit
import Logging
import Testing

/// Many named harmonizers in one registry, each raced by count-downs, a cancel and a timeout
/// from different tasks: each ends with exactly one outcome and one completion call at most.
@Suite struct HarmonizerStressTests {
    @Test func registryRacesEndEachHarmonizerOnce() async throws {
        for seed in StressConfiguration.seeds(default: 40, base: 0x4A12_0001) {
            var generator = SeededGenerator(seed: seed)
            let clock = ManualClock()
            // Extra count-downs are the point here; logging each name's first would bury the run's output.
            let quiet = Logger(label: "quiet") { _ in SwiftLogNoOpLogHandler() }
            let registry = HarmonizerRegistry(clock: clock, logger: quiet)
            let ledger = OutcomeLedger<String>()
            let names = (0..<20).map { "h\($0)" }
            var harmonizers: [Harmonizer] = []
            for name in names {
                ledger.expect(name)
                let count = Int.random(in: 1...8, using: &generator)
                harmonizers.append(
                    try registry.create(name, count: count, timeout: .milliseconds(5), on: .immediate) { outcome in
                        ledger.record(name, "\(outcome)")
                    })
            }
            await withTaskGroup(of: Void.self) { group in
                for name in names {
                    let cancels = Int.random(in: 0..<4, using: &generator) == 0
                    let extra = Int.random(in: 0...3, using: &generator)
                    group.addTask {
                        for _ in 0..<(8 + extra) { _ = registry.leave(name) }
                    }
                    if cancels { group.addTask { _ = registry.cancel(name) } }
                }
                group.addTask { clock.advance(by: .milliseconds(5)) }
            }
            clock.advance(by: .milliseconds(5))
            for (name, harmonizer) in zip(names, harmonizers) {
                let outcome = await harmonizer.outcome
                if case .cancelled = outcome {
                    #expect(ledger.outcome(of: name) == nil, "seed \(seed): \(name) cancelled yet completed")
                    ledger.record(name, "cancelled")
                }
                #expect(registry.count(name) == 0, "seed \(seed)")
            }
            ledger.verify()
        }
    }
}
