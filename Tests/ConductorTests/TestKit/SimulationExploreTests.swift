import Conductor
import ConductorTestKit
import Testing

/// `explore` runs a scenario under many seeds and stops at the first that fails, with the
/// order its traced work started and ended; `replay` runs that seed's interleaving again.
@Suite(.timeLimit(.minutes(1))) struct SimulationExploreTests {
    private struct MissingConfig: Error {}

    /// A launch whose "session" reads the configuration "config" writes. Without the
    /// dependency between them the read races the write, and some seeds lose the race.
    private static func launch(sessionDependsOnConfig: Bool) -> @Sendable (Simulation) async throws -> String? {
        { simulation in
            let config = Lock<String?>(nil)
            let seen = Lock<String?>(nil)
            let launcher = Launcher(clock: simulation.clock)
            try launcher.add(
                ClosureStartupTask("config", dependsOn: []) {
                    await simulation.traced("config") {
                        await Task.yield()
                        config.withLock { $0 = "production" }
                    }
                })
            try launcher.add(
                ClosureStartupTask("session", dependsOn: sessionDependsOnConfig ? ["config"] : []) {
                    await simulation.traced("session") {
                        await Task.yield()
                        let value = config.withLock { $0 }
                        seen.withLock { $0 = value }
                    }
                })
            try await launcher.run()
            return seen.withLock { $0 }
        }
    }

    private static func sessionSawConfig(_ run: SimulationRun<String?>) throws {
        if run.value == nil { throw MissingConfig() }
    }

    @Test func exploreStopsAtTheFirstFailingSeedWithItsOrder() async throws {
        let buggy = Self.launch(sessionDependsOnConfig: false)
        let error = await #expect(throws: SimulationError.self) {
            try await Simulation.explore(seeds: 1...200, buggy, check: Self.sessionSawConfig)
        }
        let failure = try #require(error)
        #expect(failure.code == .failed)
        let sessionEnded = try #require(failure.trace.firstIndex(of: "session ended"))
        let configEnded = try #require(failure.trace.firstIndex(of: "config ended"))
        #expect(sessionEnded < configEnded, "the session read before the config was written")
        #expect(failure.message.contains("seed \(failure.seed)"))
        // It is the first failing seed: every earlier one passes.
        let passed = try await Simulation.explore(
            seeds: 1..<failure.seed, buggy, check: Self.sessionSawConfig)
        #expect(passed == Int(failure.seed) - 1)
    }

    /// A seed found by `explore` fails the same way, with the same order, every time.
    @Test func replayRunsTheFailingInterleavingAgain() async throws {
        let buggy = Self.launch(sessionDependsOnConfig: false)
        // The scenario itself throws this time: a thrown error fails a seed like a check.
        let throwing: @Sendable (Simulation) async throws -> String = { simulation in
            guard let config = try await buggy(simulation) else { throw MissingConfig() }
            return config
        }
        let found = await #expect(throws: SimulationError.self) {
            try await Simulation.explore(seeds: 1...200, throwing)
        }
        let failure = try #require(found)
        for _ in 1...20 {
            let again = await #expect(throws: SimulationError.self) {
                try await Simulation.replay(seed: failure.seed, throwing)
            }
            #expect(again == failure)
        }
    }

    @Test func aCorrectLaunchPassesEverySeed() async throws {
        let fixed = Self.launch(sessionDependsOnConfig: true)
        let passed = try await Simulation.explore(seeds: 1...200, fixed, check: Self.sessionSawConfig)
        #expect(passed == 200)
        let run = try await Simulation.replay(seed: 17, fixed)
        #expect(run.trace == ["config started", "config ended", "session started", "session ended"])
    }
}
