import Conductor
import ConductorTestKit
import Dispatch
import HTTPTypes
import Testing

/// A launcher and a request gate run under a simulation like a graph does: every task they
/// start follows the simulation's executor, so a seed replays their interleaving exactly, and
/// work that leaves the simulation is counted.
@Suite(.timeLimit(.minutes(1))) struct SimulationLaunchAndGateTests {
    private struct Flaky: Error {}

    // MARK: - Launcher

    /// Hears the launch's events in the order they are delivered.
    private struct LogObserver: LaunchObserver {
        let log: Recorder<String>
        func taskStarted(_ name: String) { log.append("observed start \(name)") }
        func taskCompleted(_ name: String) { log.append("observed end \(name)") }
        func taskFailed(_ name: String, error: any Error) { log.append("observed failure \(name)") }
        func readinessReached(_ name: String) { log.append("observed ready \(name)") }
        func launchFinished(_ outcome: RunOutcome) { log.append("observed finish \(outcome)") }
    }

    /// A launch whose tasks interleave: config first, then session and images in parallel with
    /// the database, images optional and failing, a readiness set awaited with a deadline, the
    /// report, and a shutdown that undoes what ran. Returns the bodies' and observer's log.
    private static func launch(_ simulation: Simulation) async throws -> [String] {
        let log = Recorder<String>()
        let clock = simulation.clock
        let launcher = Launcher(clock: clock, undoTimeout: .seconds(1))
        @Sendable func steps(_ name: String, sleeping: Duration? = nil) -> @Sendable () async throws -> Void {
            {
                for step in 1...3 {
                    log.append("\(name) \(step)")
                    await Task.yield()
                }
                if let sleeping { try await clock.sleep(for: sleeping) }
            }
        }
        try launcher.add(
            ClosureStartupTask("config", run: steps("config", sleeping: .milliseconds(30))) {
                log.append("undo config")
            })
        try launcher.add(
            ClosureStartupTask("database", dependsOn: [], run: steps("database")) { log.append("undo database") })
        try launcher.add(
            ClosureStartupTask("session", dependsOn: ["config"], run: steps("session", sleeping: .milliseconds(10))))
        try launcher.add(
            ClosureStartupTask("images", dependsOn: ["config"], options: TaskOptions(failure: .optional)) {
                try await steps("images")()
                throw Flaky()
            })
        try launcher.add(ClosureStartupTask("home", dependsOn: ["session", "database"], run: steps("home")))
        try launcher.addReadiness("firstScreen", after: ["session", "database"])
        let observation = launcher.observe(on: .immediate, LogObserver(log: log))
        try launcher.start()
        let readiness = try await launcher.ready("firstScreen", timeout: .seconds(2))
        log.append("firstScreen \(readiness)")
        let report = try await launcher.report()
        log.append("launch \(report.outcome)")
        let shutdown = await launcher.shutdown()
        log.append("undone \(shutdown.undos.count)")
        observation.cancel()
        return log.all
    }

    @Test func aSeedReplaysTheSameLaunchAHundredTimes() async throws {
        let first = try await Simulation.run(seed: 5, Self.launch)
        #expect(first.escapes == 0, "the launcher's own tasks all ran on the simulation")
        #expect(first.value.contains("firstScreen ready at 40 ms"))
        #expect(first.value.contains("undo config"))
        for _ in 1..<100 {
            let again = try await Simulation.run(seed: 5, Self.launch)
            #expect(again.value == first.value)
            #expect(again.jobsRun == first.jobsRun)
        }
    }

    @Test func otherSeedsInterleaveTheLaunchDifferently() async throws {
        var logs: Set<[String]> = []
        for seed in UInt64(1)...20 {
            let run = try await Simulation.run(seed: seed, Self.launch)
            #expect(run.escapes == 0)
            logs.insert(run.value)
        }
        #expect(logs.count > 1)
    }

    /// A continuation resumed from a dispatch queue, only once its task has suspended: a resume
    /// that came before would let the task go on at once, on the simulation's thread, and
    /// nothing would have left it (escape detection counts jobs that come back, not work that
    /// went out).
    private final class Callback: Sendable {
        private let continuation = Lock<CheckedContinuation<Void, Never>?>(nil)

        func wait() async {
            await withCheckedContinuation { continuation in self.continuation.withLock { $0 = continuation } }
        }

        /// Runs on the simulation: a job of its own runs only after the waiting task's job has
        /// ended, so once the continuation is stored, its task has suspended.
        func answerFromAnotherThread() async {
            while true {
                if let waiting = continuation.withLock({ $0.take() }) {
                    DispatchQueue(label: "callback").async { waiting.resume() }
                    return
                }
                await Task.yield()
            }
        }
    }

    /// A launch task that waits for a callback from a dispatch queue leaves the simulation: the
    /// job that resumes it comes from another thread, and the run counts it. (The idle limit is
    /// real time: a busy machine may take a while to run the queue.)
    @Test func aLaunchTaskThatLeavesTheSimulationIsCounted() async throws {
        let run = try await Simulation.run(seed: 9, idleLimit: .seconds(40)) { simulation in
            let launcher = Launcher(clock: simulation.clock)
            let callback = Callback()
            try launcher.add(ClosureStartupTask("thumbnails", dependsOn: []) { await callback.wait() })
            try launcher.add(ClosureStartupTask("decoder", dependsOn: []) { await callback.answerFromAnotherThread() })
            try await launcher.run()
            return try await launcher.report().outcome
        }
        #expect(run.value == .completed)
        #expect(run.escapes >= 1)
    }

    // MARK: - Gate

    /// An in-memory server on the simulation's clock: each request takes 10 ms of simulated
    /// time, `/ads` fails once on the wire, and only the token it issued last is accepted.
    private final class SimulatedServer: GateTransport {
        private struct State {
            var validToken = "t1"
            var issued = 1
            var adsFailed = false
        }
        private let state = Lock(State())
        let clock: ManualClock
        let log: Recorder<String>

        init(clock: ManualClock, log: Recorder<String>) {
            self.clock = clock
            self.log = log
        }

        func send(_ request: HTTPRequest, body: GateRequestBody?) async throws -> GateTransportResponse {
            let path = request.path ?? ""
            let token = request.headerFields[.authorization].map { String($0.dropFirst("Bearer ".count)) }
            log.append("server got \(path) with \(token ?? "nothing")")
            await Task.yield()
            try await clock.sleep(for: .milliseconds(10))
            let status = try state.withLock { state throws -> HTTPResponse.Status in
                if path == "/ads", !state.adsFailed {
                    state.adsFailed = true
                    throw Flaky()
                }
                return token == state.validToken ? .ok : .unauthorized
            }
            return GateTransportResponse(response: HTTPResponse(status: status), body: Array(path.utf8))
        }

        func issue() -> String {
            state.withLock { state in
                state.issued += 1
                state.validToken = "t\(state.issued)"
                return state.validToken
            }
        }
    }

    private static func request(_ path: String) -> HTTPRequest {
        HTTPRequest(method: .get, scheme: "https", authority: "api.example", path: path)
    }

    /// Five requests at once through a gate of two slots, with an expired credential (one
    /// single-flight refresh), a coalesced pair and a transient failure retried after a
    /// seeded backoff. Returns the server's log, the callers' results and the gate's events.
    private static func pageThroughGate(_ simulation: Simulation) async throws -> [String] {
        let log = Recorder<String>()
        let clock = simulation.clock
        let server = SimulatedServer(clock: clock, log: log)
        let gate = try RequestGate<String>(
            transport: server, credential: "t0",
            configuration: GateConfiguration(maxConcurrentRequests: 2, jitterSeed: 1), clock: clock,
            authorize: { request, token in request.headerFields[.authorization] = "Bearer \(token)" },
            refresh: { _ in
                log.append("refreshing")
                try await clock.sleep(for: .milliseconds(50))
                return server.issue()
            })
        let calls: [(path: String, priority: RequestPriority, key: String?)] = [
            ("/profile", .high, nil), ("/feed", .default, "feed"), ("/feed", .default, "feed"),
            ("/ads", .low, nil), ("/settings", .default, nil),
        ]
        await withTaskGroup(of: Void.self) { group in
            for call in calls {
                group.addTask {
                    do throws(GateError) {
                        let response = try await gate.send(
                            Self.request(call.path), priority: call.priority, coalescingKey: call.key)
                        log.append("caller got \(call.path) \(response.response.status.code)")
                    } catch {
                        log.append("caller got \(call.path) \(error.code)")
                    }
                }
            }
        }
        gate.shutdown()
        return log.all + gate.recordedEvents.map { "\($0)" } + ["at \(clock.now)"]
    }

    @Test func aSeedReplaysTheSameGateTrafficAHundredTimes() async throws {
        let first = try await Simulation.run(seed: 21, Self.pageThroughGate)
        #expect(first.escapes == 0, "the gate's flights, workers and refresh all ran on the simulation")
        #expect(first.value.filter { $0 == "refreshing" }.count == 1, "one refresh for every rejection")
        #expect(first.value.filter { $0.hasPrefix("caller got") && $0.hasSuffix(" 200") }.count == 5)
        for _ in 1..<100 {
            let again = try await Simulation.run(seed: 21, Self.pageThroughGate)
            #expect(again.value == first.value)
            #expect(again.jobsRun == first.jobsRun)
        }
    }

    @Test func otherSeedsInterleaveTheGateDifferently() async throws {
        var logs: Set<[String]> = []
        for seed in UInt64(1)...20 {
            let run = try await Simulation.run(seed: seed, Self.pageThroughGate)
            #expect(run.escapes == 0)
            logs.insert(run.value)
        }
        #expect(logs.count > 1)
    }

    /// A transport that answers from a dispatch queue, as URLSession's callbacks do: each
    /// answer resumes the gate's flight from outside the simulation, and the run counts it.
    @Test func aTransportThatAnswersFromAnotherThreadIsCounted() async throws {
        struct CallbackTransport: GateTransport {
            let callback: Callback
            func send(_ request: HTTPRequest, body: GateRequestBody?) async throws -> GateTransportResponse {
                await callback.wait()
                return GateTransportResponse(response: HTTPResponse(status: .ok), body: [])
            }
        }
        let run = try await Simulation.run(seed: 4, idleLimit: .seconds(40)) { simulation in
            let callback = Callback()
            let gate = try RequestGate<String>(
                transport: CallbackTransport(callback: callback), clock: simulation.clock, authorize: { _, _ in },
                refresh: { _ in "t" })
            async let sent = gate.send(Self.request("/feed"), authorization: .anonymous)
            await callback.answerFromAnotherThread()
            let response = try await sent
            gate.shutdown()
            return response.response.status.code
        }
        #expect(run.value == 200)
        #expect(run.escapes >= 1)
    }
}
