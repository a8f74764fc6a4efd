// The complete example of the "Finding an ordering bug" article
// (Sources/ConductorTestKit/Documentation.docc/FindingAnOrderingBug.md). It is compiled with the
// tests and run by the tests at the end, so the article's code and the seed and trace it shows
// cannot drift from the API. Keep the two in step: each `// MARK: - Article:` block is quoted
// there.

import Conductor
import ConductorTestKit
import Testing

// MARK: - Article: the app's start-up

/// What start-up fills in.
final class StartupState: Sendable {
    // Conductor's own `Lock`, as every lock in this repository is (CI checks it); an app would
    // use `Mutex` from the Synchronization module.
    private let values = Lock<(apiHost: String?, sessionHost: String?)>((nil, nil))

    var apiHost: String? {
        get { values.withLock { $0.apiHost } }
        set { values.withLock { $0.apiHost = newValue } }
    }
    var sessionHost: String? {
        get { values.withLock { $0.sessionHost } }
        set { values.withLock { $0.sessionHost = newValue } }
    }
}

/// The app's local storage; each read suspends, as a real asynchronous read does.
struct LocalStore: Sendable {
    func read(_ key: String) async -> String {
        await Task.yield()
        return key == "apiHost" ? "eu.api.example.com" : ""
    }
}

/// The start-up tasks: "config" reads which server to use, "session" opens a session on it.
func addStartupTasks(to launcher: Launcher, state: StartupState, store: LocalStore) throws {
    try launcher.add(
        ClosureStartupTask("config", dependsOn: []) {
            state.apiHost = await store.read("apiHost")
        })
    try launcher.add(
        ClosureStartupTask("session", dependsOn: []) {
            _ = await store.read("sessionToken")
            state.sessionHost = state.apiHost ?? "api.example.com"
        })
}

// MARK: - Article: the test that explores

struct SessionUsedTheDefaultHost: Error {}

@Sendable func launch(_ simulation: Simulation) async throws -> String? {
    let state = StartupState()
    let launcher = Launcher(clock: simulation.clock)
    try addStartupTasks(to: launcher, state: state, store: LocalStore())
    simulation.traceTasks(of: launcher)
    try await launcher.run()
    return state.sessionHost
}

func findTheOrderingBug() async throws {
    try await Simulation.explore(seeds: 1...500, launch) { run in
        guard run.value == "eu.api.example.com" else { throw SessionUsedTheDefaultHost() }
    }
}

// MARK: - Article: the fix

func addFixedStartupTasks(to launcher: Launcher, state: StartupState, store: LocalStore) throws {
    try launcher.add(
        ClosureStartupTask("config", dependsOn: []) {
            state.apiHost = await store.read("apiHost")
        })
    try launcher.add(
        ClosureStartupTask("session", dependsOn: ["config"]) {
            _ = await store.read("sessionToken")
            state.sessionHost = state.apiHost ?? "api.example.com"
        })
}

// MARK: - Running the article

@Suite(.timeLimit(.minutes(1))) struct OrderingBugArticleTests {
    /// What the article says `explore` reports: the seed, the message and the trace.
    @Test func exploreReportsTheSeedTheArticleShows() async throws {
        let found = await #expect(throws: SimulationError.self) { try await findTheOrderingBug() }
        let failure = try #require(found)
        #expect(failure.seed == 4)
        #expect(failure.trace == ["config started", "session started", "session ended", "config ended"])
        #expect(
            failure.message
                == "simulation with seed 4 failed: SessionUsedTheDefaultHost(); replay it with "
                + "Simulation.replay(seed: 4); order: config started, session started, session ended, config ended")
        // Seed 2 ran the tasks in the same order and passed: the trace shows when tasks end,
        // and there "config" had written just before its end was logged.
        let seedTwo = try await Simulation.replay(seed: 2, launch)
        #expect(seedTwo.trace == failure.trace && seedTwo.value == "eu.api.example.com")
        // The article's replay, failing the same way each time.
        for _ in 1...10 {
            let again = await #expect(throws: SimulationError.self) {
                try await Simulation.replay(seed: 4, launch) { run in
                    guard run.value == "eu.api.example.com" else { throw SessionUsedTheDefaultHost() }
                }
            }
            #expect(again == failure)
        }
    }

    @Test func theFixPassesEverySeed() async throws {
        @Sendable func fixedLaunch(_ simulation: Simulation) async throws -> String? {
            let state = StartupState()
            let launcher = Launcher(clock: simulation.clock)
            try addFixedStartupTasks(to: launcher, state: state, store: LocalStore())
            simulation.traceTasks(of: launcher)
            try await launcher.run()
            return state.sessionHost
        }
        let passed = try await Simulation.explore(seeds: 1...500, fixedLaunch) { run in
            guard run.value == "eu.api.example.com" else { throw SessionUsedTheDefaultHost() }
        }
        #expect(passed == 500)
        let run = try await Simulation.replay(seed: 4, fixedLaunch)
        #expect(run.trace == ["config started", "config ended", "session started", "session ended"])
    }
}
