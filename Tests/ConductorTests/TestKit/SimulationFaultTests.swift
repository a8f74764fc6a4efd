import Conductor
import ConductorTestKit
import HTTPTypes
import Testing

/// Fault injection by seed: a `FaultPlan` fails, cancels or delays a fraction of the visits to
/// named points — task bodies, a transport's sends — drawn from the simulation's seed, so a
/// seed that failed because of a fault replays with the same fault at the same moment.
@Suite(.timeLimit(.minutes(2))) struct SimulationFaultTests {
    private struct LaunchFailed: Error, CustomStringConvertible {
        let outcome: RunOutcome
        var description: String { "the launch ended \(outcome)" }
    }

    /// An in-memory server: each request takes 20 ms of simulated time and answers its path.
    private struct EchoServer: GateTransport {
        let clock: ManualClock
        func send(_ request: HTTPRequest, body: GateRequestBody?) async throws -> GateTransportResponse {
            try await clock.sleep(for: .milliseconds(20))
            return GateTransportResponse(response: HTTPResponse(status: .ok), body: Array((request.path ?? "").utf8))
        }
    }

    private static func get(_ path: String) -> HTTPRequest {
        HTTPRequest(method: .get, scheme: "https", authority: "api.example", path: path)
    }

    // MARK: - Determinism

    private static let mixedPlan = FaultPlan()
        .failing("send", rate: 0.15)
        .delaying("send", rate: 0.25, by: .milliseconds(300))
        .cancelling("database", rate: 0.3)
        .delaying("session", rate: 0.5, by: .seconds(1))

    /// A launch whose bodies are fault points and whose requests go through a faulty
    /// transport and a gate that retries. Returns what each task saw, and the launch report's
    /// outcomes.
    private static func launch(_ simulation: Simulation) async throws -> [String] {
        let log = Recorder<String>()
        let transport = FaultInjectingTransport(EchoServer(clock: simulation.clock), simulation: simulation)
        let gate = try RequestGate<String>(
            transport: transport, credential: "t",
            configuration: GateConfiguration(
                maxConcurrentRequests: 2, retry: .automatic(.attempts(2, backoff: .milliseconds(200))), jitterSeed: 3),
            clock: simulation.clock, authorize: { _, _ in }, refresh: { _ in "t" })
        let launcher = Launcher(clock: simulation.clock)
        @Sendable func fetch(_ name: String, _ path: String) -> @Sendable () async throws -> Void {
            {
                let before = simulation.clock.now
                try await simulation.injectFault(at: name)
                let waited = before.duration(to: simulation.clock.now)
                if waited > .zero { log.append("\(name) waited \(waited)") }
                do throws(GateError) {
                    let response = try await gate.send(Self.get(path))
                    log.append("\(name) got \(response.response.status.code) at \(simulation.clock.now)")
                } catch {
                    log.append("\(name) failed: \(error.code) at \(simulation.clock.now)")
                    throw error
                }
            }
        }
        try launcher.add(ClosureStartupTask("config", dependsOn: [], run: fetch("config", "/config")))
        try launcher.add(
            ClosureStartupTask(
                "database", dependsOn: [], options: TaskOptions(failure: .optional), run: fetch("database", "/database")
            ))
        try launcher.add(
            ClosureStartupTask(
                "session", dependsOn: ["config"], options: TaskOptions(failure: .optional),
                run: fetch("session", "/session")))
        try launcher.add(
            ClosureStartupTask(
                "feed", dependsOn: ["config"], options: TaskOptions(failure: .optional), run: fetch("feed", "/feed")))
        try? await launcher.run()
        gate.shutdown()
        let report = try await launcher.report()
        return log.all + report.tasks.map { "\($0.id): \($0.outcome)" }
    }

    @Test func aSeedInjectsTheSameFaultsAndTraceTwentyTimes() async throws {
        // The first seed that injects anything.
        var found: SimulationRun<[String]>?
        for seed in UInt64(1)...20 where found == nil {
            let run = try await Simulation.run(seed: seed, faults: Self.mixedPlan, Self.launch)
            if !run.faults.isEmpty { found = run }
        }
        let first = try #require(found)
        #expect(first.escapes == 0)
        #expect(first.trace == first.faults.map { "fault: \($0)" })
        for _ in 1..<20 {
            let again = try await Simulation.run(seed: first.seed, faults: Self.mixedPlan, Self.launch)
            #expect(again.faults == first.faults)
            #expect(again.trace == first.trace)
            #expect(again.value == first.value)
            #expect(again.jobsRun == first.jobsRun)
        }
    }

    @Test func otherSeedsInjectOtherFaults() async throws {
        var faultSets: Set<[InjectedFault]> = []
        var kinds: Set<String> = []
        for seed in UInt64(1)...20 {
            let run = try await Simulation.run(seed: seed, faults: Self.mixedPlan, Self.launch)
            #expect(run.escapes == 0)
            faultSets.insert(run.faults)
            for fault in run.faults { kinds.insert("\(fault.kind)") }
        }
        #expect(faultSets.count > 10)
        #expect(kinds == ["fail", "cancel", "delay 300 ms", "delay 1.00 s"])
    }

    /// Injected faults are really done: a cancelled body ends its task as cancelled, a failed
    /// send is retried by the gate, a delayed body starts later in simulated time.
    @Test func injectedFaultsTakeEffect() async throws {
        var sawCancelled = false
        var sawDelayedSession = false
        var sawRetriedSend = false
        for seed in UInt64(1)...20 {
            let run = try await Simulation.run(seed: seed, faults: Self.mixedPlan, Self.launch)
            let cancelledDatabase = run.faults.contains { $0.point == "database" && $0.kind == .cancel }
            #expect(run.value.contains("database: cancelled") == cancelledDatabase)
            sawCancelled = sawCancelled || cancelledDatabase
            if run.faults.contains(where: { $0.point == "session" }) {
                sawDelayedSession = true
                #expect(run.value.contains("session waited 1.0 seconds"))
            }
            // A send that failed on its first visit is sent again; a second failure ends it.
            for fault in run.faults where fault.point == "send" && fault.kind == .fail && fault.visit == 1 {
                sawRetriedSend = true
                let visits = run.faults.filter { $0.key == fault.key }
                let path = String(fault.key!.dropFirst("GET /".count))
                if visits.contains(where: { $0.visit == 2 && $0.kind == .fail }) {
                    #expect(run.value.contains { $0.hasPrefix("\(path) failed: transport") })
                } else {
                    #expect(run.value.contains { $0.hasPrefix("\(path) got 200") })
                }
            }
        }
        #expect(sawCancelled && sawDelayedSession && sawRetriedSend)
    }

    // MARK: - Rates

    /// Over many seeds and visits, each fault strikes at about its rate, and keyed visits
    /// draw the same faults whatever else was visited before them.
    @Test func ratesAreRoughlyHonoured() async throws {
        let plan = FaultPlan()
            .failing("p", rate: 0.2)
            .cancelling("p", rate: 0.1)
            .delaying("p", rate: 0.3, by: .milliseconds(1))
        var counts: [String: Int] = [:]
        let visits = 100
        let seeds = UInt64(1)...50
        for seed in seeds {
            let run = try await Simulation.run(seed: seed, faults: plan) { simulation in
                for _ in 1...visits { _ = simulation.fault(at: "p") }
            }
            for fault in run.faults { counts["\(fault.kind)", default: 0] += 1 }
        }
        let total = Double(visits * seeds.count)
        #expect(abs(Double(counts["fail"] ?? 0) / total - 0.2) < 0.03)
        #expect(abs(Double(counts["cancel"] ?? 0) / total - 0.1) < 0.03)
        #expect(abs(Double(counts["delay 1 ms"] ?? 0) / total - 0.3) < 0.03)
    }

    @Test func aKeysFaultsDoNotDependOnOtherKeys() async throws {
        let plan = FaultPlan().failing("send", rate: 0.5)
        let alone = try await Simulation.run(seed: 8, faults: plan) { simulation in
            (1...10).map { _ in simulation.fault(at: "send", key: "/feed") }
        }
        let mixed = try await Simulation.run(seed: 8, faults: plan) { simulation in
            (1...10).map { index in
                for _ in 0..<index { _ = simulation.fault(at: "send", key: "/ads") }
                _ = simulation.fault(at: "other")
                return simulation.fault(at: "send", key: "/feed")
            }
        }
        #expect(alone.value == mixed.value)
        #expect(Set(alone.value.map { $0 == nil }).count == 2, "ten visits at rate 0.5 draw both")
    }

    /// The draws are pinned: a seed written down in a bug report fails the same way on another
    /// machine, in another process, with another build. (A draw built on the standard
    /// library's `Hasher`, seeded per process, would pass the replay tests above and fail
    /// this one.) The visits below were computed independently of the kit.
    @Test func aSeedDrawsTheSameFaultsInEveryProcess() async throws {
        let plan = FaultPlan().failing("p", rate: 0.5)
        for (seed, failing) in [
            (UInt64(1), [2, 3, 5, 9, 11, 12, 13, 15, 16, 18]), (2, [1, 4, 5, 7, 8, 9, 10, 11, 12, 15, 18]),
        ] {
            let run = try await Simulation.run(seed: seed, faults: plan) { simulation in
                for _ in 1...20 { _ = simulation.fault(at: "p") }
            }
            #expect(run.faults.map(\.visit) == failing)
        }
    }

    @Test func noPlanInjectsNothing() async throws {
        let run = try await Simulation.run(seed: 1) { simulation in
            for _ in 1...100 { try await simulation.injectFault(at: "send") }
            return simulation.faultPlan
        }
        #expect(run.faults.isEmpty && run.trace.isEmpty)
        #expect(run.value == .none)
        #expect("\(Self.mixedPlan)".contains("send: fail 0.15, delay 0.25 by 300 ms"))
    }

    // MARK: - A bug a fault exposes

    /// A start-up graph whose "home" reads the optional "thumbnails" result: it runs when
    /// thumbnails failed (`.runAnyway`), and the buggy version reads the result as if it were
    /// always there.
    private static func launchGraph(handlesMissingThumbnails: Bool) -> @Sendable (Simulation) async throws -> RunReport
    {
        { simulation in
            let server = EchoServer(clock: simulation.clock)
            let images = FaultInjectingTransport(server, simulation: simulation, point: "images")
            var graph = TaskGraph()
            let config = graph.add("config") { _ in try await server.send(Self.get("/config"), body: nil).body }
            let thumbnails = graph.add("thumbnails", dependsOn: ["config"], options: TaskOptions(failure: .optional)) {
                _ in
                try await images.send(Self.get("/thumbnails"), body: nil).body
            }
            graph.add(
                "home", dependsOn: ["config", "thumbnails"], options: TaskOptions(whenDependencyFails: .runAnyway)
            ) { context in
                let settings = try context.value(of: config)
                let images =
                    handlesMissingThumbnails
                    ? (try? context.value(of: thumbnails)) ?? Array("placeholder".utf8)
                    : try context.value(of: thumbnails)
                return settings.count + images.count
            }
            let run = try graph.start(clock: simulation.clock)
            simulation.traceTasks(of: run)
            let report = try await run.report()
            guard report.isSuccess else { throw LaunchFailed(outcome: report.outcome) }
            return report
        }
    }

    @Test func exploreFindsTheLaunchThatMishandlesAFailedOptionalTask() async throws {
        let faults = FaultPlan().failing("images", rate: 0.1)
        let buggy = Self.launchGraph(handlesMissingThumbnails: false)
        let found = await #expect(throws: SimulationError.self) {
            try await Simulation.explore(seeds: 1...200, faults: faults, buggy)
        }
        let failure = try #require(found)
        #expect(failure.code == .failed)
        #expect(failure.trace.contains("fault: fail at 'images' (GET /thumbnails) visit 1"))
        #expect(failure.trace.contains("thumbnails failed"))
        #expect(failure.trace.contains("home failed"))
        for _ in 1...5 {
            let again = await #expect(throws: SimulationError.self) {
                try await Simulation.replay(seed: failure.seed, faults: faults, buggy)
            }
            #expect(again == failure)
        }
        // Without faults the same seed passes: the fault exposed the bug.
        _ = try await Simulation.replay(seed: failure.seed, buggy)
        // The fixed launch passes that seed, with the same fault, and every other.
        let fixed = Self.launchGraph(handlesMissingThumbnails: true)
        let run = try await Simulation.replay(seed: failure.seed, faults: faults, fixed)
        #expect(run.faults.contains { $0.key == "GET /thumbnails" && $0.kind == .fail })
        #expect(run.trace.contains("home ended"))
        #expect(try await Simulation.explore(seeds: 1...200, faults: faults, fixed) == 200)
    }
}
