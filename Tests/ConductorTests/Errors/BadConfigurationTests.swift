import Conductor
import ConductorTestKit
import HTTPTypes
import Testing

/// Bad configuration gets a clear answer, consistently: a negative duration, a concurrency
/// limit below 1 or a retry policy of no attempts is rejected by the first call that already
/// throws for its object (validation or starting for a graph, `add` for a launch task, `send`
/// for a gate), naming the culprit, and every setter of a clamped property clamps like its
/// initializer. Zero is a legal duration: it means "no time".
@Suite struct BadConfigurationTests {
    // MARK: - Graphs and schedules

    @Test func aNegativeTaskTimeoutIsRejectedBeforeAnythingRuns() async throws {
        let ran = Recorder<String>()
        var graph = TaskGraph()
        graph.add("fetch", options: TaskOptions(timeout: .seconds(-1))) { _ in ran.append("fetch") }
        let validated = try #require(throws: GraphError.self) { try graph.validate() }
        #expect(validated.code == .negativeDuration)
        #expect(validated.message == "task 'fetch' has a negative timeout (-1.00 s)")
        #expect(validated.taskID == "fetch")
        let started = try #require(throws: GraphError.self) { try graph.start(clock: ManualClock()) }
        #expect(started == validated)
        let ranToEnd = await #expect(throws: GraphError.self) { try await graph.run(clock: ManualClock()) }
        #expect(ranToEnd == validated)
        #expect(ran.all.isEmpty)
    }

    @Test func negativeRetryBackoffsAreRejectedNamingTheParameter() throws {
        var graph = TaskGraph()
        graph.add("config", options: TaskOptions(retry: .attempts(3, backoff: .milliseconds(-5)))) { _ in }
        let backoff = try #require(throws: GraphError.self) { try graph.validate() }
        #expect(backoff.message == "task 'config' has a negative retry backoff (-5 ms)")

        graph = TaskGraph()
        graph.add("config", options: TaskOptions(retry: .attempts(3, maxBackoff: .seconds(-2)))) { _ in }
        let maximum = try #require(throws: GraphError.self) { try graph.validate() }
        #expect(maximum.code == .negativeDuration)
        #expect(maximum.message == "task 'config' has a negative retry maxBackoff (-2.00 s)")
    }

    @Test func aScheduleStepWithANegativeTimeoutIsRejected() throws {
        let schedule = Schedule {
            Stage("basics") { Step("basicInfo", options: TaskOptions(timeout: .seconds(-1))) { _ in } }
        }
        let error = try #require(throws: GraphError.self) { try schedule.start(clock: ManualClock()) }
        #expect(error.message == "task 'basicInfo' has a negative timeout (-1.00 s)")
    }

    @Test func aTaskAddedToARunningGraphWithANegativeTimeoutIsRejected() async throws {
        let latch = Latch()
        var graph = TaskGraph()
        graph.add("hold") { _ in await latch.wait() }
        let run = try graph.start(clock: ManualClock())
        var late = TaskGraph()
        late.add("late", options: TaskOptions(timeout: .seconds(-3))) { _ in }
        let error = try #require(throws: GraphError.self) { try run.add(late) }
        #expect(error.message == "task 'late' has a negative timeout (-3.00 s)")
        latch.open()
        #expect(try await run.report().isSuccess)
    }

    /// Zero means "no time": legal, and the attempt times out at once.
    @Test func zeroDurationsAreLegal() async throws {
        let never = Latch()
        var graph = TaskGraph()
        graph.add("retried", options: TaskOptions(retry: .attempts(2, backoff: .zero, maxBackoff: .zero))) { _ in }
        graph.add("instant", options: TaskOptions(timeout: .zero, failure: .optional)) { _ in await never.wait() }
        try graph.validate()
        let report = try await graph.run(clock: ManualClock())
        never.open()
        #expect(report.isSuccess)
        let instant = try #require(report.tasks.first { $0.id == "instant" })
        guard case .timedOut(after: .zero) = instant.outcome else {
            Issue.record("expected a timeout, got \(instant.outcome)")
            return
        }
    }

    /// Every way of starting takes a limit, and each reports one below 1 before anything runs:
    /// a limit of zero would start nothing, ever, and it used to be counted as 1 without a word.
    @Test(arguments: [0, -1])
    func aConcurrencyLimitBelowOneIsRejectedByEveryWayOfStarting(limit: Int) async throws {
        let ran = Recorder<String>()
        let watched = Recorder<String>()
        var graph = TaskGraph()
        graph.add("fetch") { _ in ran.append("fetch") }
        let schedule = Schedule { Stage("basics") { Step("basicInfo") { _ in ran.append("basicInfo") } } }
        let expected = "concurrencyLimit must be at least 1 (got \(limit))"

        let started = try #require(throws: GraphError.self) {
            try graph.start(concurrencyLimit: limit, clock: ManualClock())
        }
        #expect(started.code == .invalidConfiguration)
        #expect(started.message == expected)
        #expect(started.taskID == nil)
        let ranToEnd = await #expect(throws: GraphError.self) {
            try await graph.run(concurrencyLimit: limit, clock: ManualClock())
        }
        #expect(ranToEnd == started)
        let ranBeside = await #expect(throws: GraphError.self) {
            try await graph.run(concurrencyLimit: limit, clock: ManualClock()) { _ in watched.append("body") }
        }
        #expect(ranBeside == started)
        let scheduleStarted = try #require(throws: GraphError.self) {
            try schedule.start(concurrencyLimit: limit, clock: ManualClock())
        }
        #expect(scheduleStarted == started)
        let scheduleRan = await #expect(throws: GraphError.self) {
            try await schedule.run(concurrencyLimit: limit, clock: ManualClock())
        }
        #expect(scheduleRan == started)
        #expect(ran.all.isEmpty)
        #expect(watched.all.isEmpty)
    }

    /// `RetryPolicy.attempts` is a value and cannot throw: the count is kept as given, and
    /// validation reports it with the task that holds it. It used to be counted as 1.
    @Test(arguments: [0, -2])
    func aRetryPolicyOfNoAttemptsIsRejectedBeforeAnythingRuns(count: Int) async throws {
        #expect(RetryPolicy.attempts(count).maxAttempts == count)
        let ran = Recorder<String>()
        var graph = TaskGraph()
        graph.add("fetch", options: TaskOptions(retry: .attempts(count))) { _ in ran.append("fetch") }
        let expected = "task 'fetch' has a retry policy of \(count) attempts; it needs at least 1"

        let validated = try #require(throws: GraphError.self) { try graph.validate() }
        #expect(validated.code == .invalidConfiguration)
        #expect(validated.message == expected)
        #expect(validated.taskID == "fetch")
        let started = try #require(throws: GraphError.self) { try graph.start(clock: ManualClock()) }
        #expect(started == validated)
        let ranToEnd = await #expect(throws: GraphError.self) { try await graph.run(clock: ManualClock()) }
        #expect(ranToEnd == validated)

        // Added before its dependency, the graph takes the full validation, which says the same.
        var unordered = TaskGraph()
        unordered.add("page", dependsOn: ["fetch"]) { _ in ran.append("page") }
        unordered.add("fetch", options: TaskOptions(retry: .attempts(count))) { _ in ran.append("fetch") }
        #expect(throws: validated) { try unordered.validate() }

        let schedule = Schedule {
            Stage("basics") {
                Step("fetch", options: TaskOptions(retry: .attempts(count))) { _ in ran.append("fetch") }
            }
        }
        #expect(throws: validated) { try schedule.start(clock: ManualClock()) }
        #expect(ran.all.isEmpty)
    }

    /// A multiplier below 1 would shrink the waits (zero: none after the second attempt). It
    /// used to be counted as 1 without a word; now it is kept and reported like a count of
    /// no attempts, by every call that validates the task.
    @Test(arguments: [0, -3])
    func aRetryMultiplierBelowOneIsRejectedBeforeAnythingRuns(multiplier: Int) async throws {
        let policy = RetryPolicy.attempts(3, multiplier: multiplier)
        #expect(policy.multiplier == multiplier)
        let ran = Recorder<String>()
        var graph = TaskGraph()
        graph.add("fetch", options: TaskOptions(retry: policy)) { _ in ran.append("fetch") }
        let expected = "task 'fetch' has a retry multiplier of \(multiplier); it needs at least 1"

        let validated = try #require(throws: GraphError.self) { try graph.validate() }
        #expect(validated.code == .invalidConfiguration)
        #expect(validated.message == expected)
        #expect(validated.taskID == "fetch")
        let started = try #require(throws: GraphError.self) { try graph.start(clock: ManualClock()) }
        #expect(started == validated)
        let ranToEnd = await #expect(throws: GraphError.self) { try await graph.run(clock: ManualClock()) }
        #expect(ranToEnd == validated)

        let schedule = Schedule {
            Stage("basics") { Step("fetch", options: TaskOptions(retry: policy)) { _ in ran.append("fetch") } }
        }
        #expect(throws: validated) { try schedule.start(clock: ManualClock()) }

        let latch = Latch()
        var holding = TaskGraph()
        holding.add("hold") { _ in await latch.wait() }
        let run = try holding.start(clock: ManualClock())
        let late = try #require(throws: GraphError.self) {
            try run.add("fetch", options: TaskOptions(retry: policy)) { _ in ran.append("late") }
        }
        #expect(late == validated)
        latch.open()
        #expect(try await run.report().isSuccess)
        #expect(ran.all.isEmpty)
    }

    @Test func aTaskAddedToARunningGraphWithNoAttemptsIsRejected() async throws {
        let latch = Latch()
        let ran = Recorder<String>()
        var graph = TaskGraph()
        graph.add("hold") { _ in await latch.wait() }
        let run = try graph.start(clock: ManualClock())
        var late = TaskGraph()
        late.add("late", options: TaskOptions(retry: .attempts(0))) { _ in ran.append("late") }
        let error = try #require(throws: GraphError.self) { try run.add(late) }
        #expect(error.code == .invalidConfiguration)
        #expect(error.message == "task 'late' has a retry policy of 0 attempts; it needs at least 1")
        let single = try #require(throws: GraphError.self) {
            try run.add("late", options: TaskOptions(retry: .attempts(0))) { _ in ran.append("late") }
        }
        #expect(single == error)
        latch.open()
        let report = try await run.report()
        #expect(report.isSuccess)
        #expect(report.tasks.map(\.id) == ["hold"])
        #expect(ran.all.isEmpty)
    }

    // MARK: - Launches

    @Test(arguments: [0, -1])
    func aLaunchTaskWithARetryPolicyOfNoAttemptsIsRejectedWhenAdded(count: Int) async throws {
        let ran = Recorder<String>()
        let launcher = Launcher(clock: ManualClock())
        let error = try #require(throws: LaunchError.self) {
            try launcher.add(
                TestStartupTask("config", options: TaskOptions(retry: .attempts(count))) { ran.append("rejected") })
        }
        #expect(error.code == .invalidConfiguration)
        #expect(error.message == "task 'config' has a retry policy of \(count) attempts; it needs at least 1")
        #expect(error.taskName == "config")
        // Nothing was kept: the name is free, and only what was added runs.
        try launcher.add(TestStartupTask("config") { ran.append("config") })
        try await launcher.run()
        #expect(ran.all == ["config"])
    }

    @Test func aLaunchTaskWithARetryMultiplierBelowOneIsRejectedWhenAdded() async throws {
        let ran = Recorder<String>()
        let launcher = Launcher(clock: ManualClock())
        let error = try #require(throws: LaunchError.self) {
            try launcher.add(
                TestStartupTask("config", options: TaskOptions(retry: .attempts(2, multiplier: 0))) {
                    ran.append("rejected")
                })
        }
        #expect(error.code == .invalidConfiguration)
        #expect(error.message == "task 'config' has a retry multiplier of 0; it needs at least 1")
        #expect(error.taskName == "config")
        try launcher.add(TestStartupTask("config") { ran.append("config") })
        try await launcher.run()
        #expect(ran.all == ["config"])
    }

    /// A launcher's initializer cannot throw: a negative `undoTimeout` is kept and reported by
    /// the first call that throws for the launcher as a whole, before any task runs. It used to
    /// count as zero without a word.
    @Test func aNegativeUndoTimeoutIsReportedWhenTheLaunchStarts() async throws {
        let ran = Recorder<String>()
        let launcher = Launcher("app", clock: ManualClock(), undoTimeout: .seconds(-1))
        try launcher.add(TestStartupTask("config") { ran.append("config") })
        let started = try #require(throws: LaunchError.self) { try launcher.start() }
        #expect(started.code == .negativeDuration)
        #expect(started.message == "launcher 'app' has a negative undoTimeout (-1.00 s)")
        let ranToEnd = await #expect(throws: LaunchError.self) { try await launcher.run() }
        #expect(ranToEnd == started)
        #expect(ran.all.isEmpty)
        // Zero is legal, as everywhere.
        let zero = Launcher(clock: ManualClock(), undoTimeout: .zero)
        try zero.add(TestStartupTask("config") { ran.append("config") })
        try await zero.run()
        #expect(ran.all == ["config"])
    }

    @Test func aLaunchTaskWithANegativeBackoffIsRejectedWhenAdded() throws {
        let launcher = Launcher(clock: ManualClock())
        let error = try #require(throws: LaunchError.self) {
            try launcher.add(
                TestStartupTask("config", options: TaskOptions(retry: .attempts(2, backoff: .seconds(-1)))))
        }
        #expect(error.code == .negativeDuration)
        #expect(error.message == "task 'config' has a negative retry backoff (-1.00 s)")
        #expect(error.taskName == "config")
        try launcher.add(TestStartupTask("config"))
    }

    @Test func aNegativeReadinessTimeoutThrowsAtOnce() async throws {
        let launcher = Launcher(clock: ManualClock())
        try launcher.addReadiness("firstScreen", after: [])
        let error = try await #require(throws: LaunchError.self) {
            try await launcher.ready("firstScreen", timeout: .seconds(-1))
        }
        #expect(error.code == .negativeDuration)
        #expect(error.message == "the wait for 'firstScreen' was given a negative timeout (-1.00 s)")
    }

    // MARK: - Gates

    static func gate(
        _ configuration: GateConfiguration,
        transport: MemoryTransport = MemoryTransport(validToken: "t0")
    ) throws(GateError) -> RequestGate<String> {
        try RequestGate(
            transport: transport, credential: "t0", configuration: configuration, clock: ManualClock(),
            authorize: { request, token in request.headerFields[.authorization] = "Bearer \(token)" },
            refresh: { _ in "t1" })
    }

    static let feed = HTTPRequest(method: .get, scheme: "https", authority: "example.test", path: "/feed")

    @Test(arguments: [
        (GateConfiguration(requestTimeout: .seconds(-1)), "GateConfiguration.requestTimeout", "-1.00 s"),
        (GateConfiguration(refreshTimeout: .seconds(-1)), "GateConfiguration.refreshTimeout", "-1.00 s"),
        (
            GateConfiguration(retry: .automatic(.attempts(3, backoff: .milliseconds(-200)))),
            "GateConfiguration.retry.schedule.initialBackoff", "-200 ms"
        ),
        (
            GateConfiguration(retry: .automatic(.attempts(3, maxBackoff: .seconds(-30)))),
            "GateConfiguration.retry.schedule.maxBackoff", "-30.00 s"
        ),
        (
            GateConfiguration(retry: .automatic(retryAfter: .honoured(upTo: .seconds(-1)))),
            "GateConfiguration.retry.retryAfter", "-1.00 s"
        ),
        (
            {
                var configuration = GateConfiguration()
                configuration.refreshWindow = .init(maxRefreshes: 5, period: .seconds(-30))
                return configuration
            }(), "GateConfiguration.refreshWindow.period", "-30.00 s"
        ),
    ])
    func aNegativeGateDurationIsRefusedWhenTheGateIsMade(
        configuration: GateConfiguration, parameter: String, value: String
    ) throws {
        let error = #expect(throws: GateError.self) { try Self.gate(configuration) }
        #expect(error?.code == .negativeDuration)
        #expect(error?.message == "\(parameter) is negative (\(value))")
        #expect(error?.request == nil)
    }

    @Test func aNegativeRequestTimeoutFailsThatSendAtOnce() async throws {
        let transport = MemoryTransport(validToken: "t0")
        let gate = try Self.gate(GateConfiguration(), transport: transport)
        let error = await #expect(throws: GateError.self) { try await gate.send(Self.feed, timeout: .seconds(-1)) }
        #expect(error?.code == .negativeDuration)
        #expect(error?.message == "GET /feed: timeout is negative (-1.00 s)")
        #expect(transport.sends.isEmpty)
        let response = try await gate.send(Self.feed)
        #expect(response.response.status == .ok)
    }

    // MARK: - Nothing is clamped silently

    /// A configuration keeps what it is given, whether through its initializer or a setter;
    /// the gate refuses it where it is made, naming the field (it was clamped to 1 before).
    @Test func maxAttemptsBelowOneIsKeptAndRefusedByTheGate() {
        var configuration = GateConfiguration(retry: .automatic(.attempts(-9, backoff: .milliseconds(200))))
        #expect(configuration.retry.schedule.maxAttempts == -9)
        configuration.retry.schedule = .attempts(0, backoff: .milliseconds(200))
        #expect(configuration.retry.schedule.maxAttempts == 0)
        let error = #expect(throws: GateError.self) { try Self.gate(configuration) }
        #expect(error?.code == .invalidConfiguration)
        #expect(error?.message == "GateConfiguration.retry.schedule.maxAttempts must be at least 1 (got 0)")
    }

    /// Every count of a configuration, at 0 and below: refused by the gate's initializer,
    /// naming the field, whether it was given to the initializer or set afterwards.
    @Test(arguments: [0, -1])
    func everyGateCountBelowOneIsRefusedWhereTheGateIsMade(value: Int) {
        let fields: [(String, (inout GateConfiguration) -> Void)] = [
            ("maxConcurrentRequests", { $0.maxConcurrentRequests = value }),
            ("retry.schedule.maxAttempts", { $0.retry.schedule = .attempts(value) }),
            ("retry.schedule.multiplier", { $0.retry.schedule = .attempts(3, multiplier: value) }),
            ("eventRetention", { $0.eventRetention = value }),
            ("agingThreshold", { $0.agingThreshold = value }),
            ("refreshWindow.maxRefreshes", { $0.refreshWindow = .init(maxRefreshes: value, period: .seconds(30)) }),
        ]
        for (name, set) in fields {
            var configuration = GateConfiguration()
            set(&configuration)
            let error = #expect(throws: GateError.self) { try Self.gate(configuration) }
            #expect(error?.code == .invalidConfiguration, "\(name)")
            #expect(error?.message == "GateConfiguration.\(name) must be at least 1 (got \(value))")
        }
    }

    /// A request's own attempt budget is checked where it is given: that send fails at once.
    @Test func aRetryPolicyOfNoAttemptsFailsThatSendAtOnce() async throws {
        let transport = MemoryTransport(validToken: "t0")
        let gate = try Self.gate(GateConfiguration(), transport: transport)
        let error = await #expect(throws: GateError.self) {
            try await gate.send(Self.feed, retry: .always(.attempts(0)))
        }
        #expect(error?.code == .invalidConfiguration)
        #expect(error?.message == "GET /feed: retry.schedule.maxAttempts must be at least 1 (got 0)")
        #expect(transport.sends.isEmpty)
    }

    /// The rest of a request's own policy is checked where it is given too, naming the field
    /// and the request: a multiplier below 1, a negative wait, a negative `Retry-After` cap.
    @Test(arguments: [
        (
            RequestRetryPolicy.automatic(.attempts(3, multiplier: 0)),
            "retry.schedule.multiplier must be at least 1 (got 0)"
        ),
        (.always(.attempts(3, backoff: .seconds(-1))), "retry.schedule.initialBackoff is negative (-1.00 s)"),
        (.automatic(.attempts(3, maxBackoff: .seconds(-2))), "retry.schedule.maxBackoff is negative (-2.00 s)"),
        (.automatic(retryAfter: .honoured(upTo: .seconds(-3))), "retry.retryAfter is negative (-3.00 s)"),
    ])
    func aRequestsOwnBadRetryPolicyFailsThatSendAtOnce(policy: RequestRetryPolicy, message: String) async throws {
        let transport = MemoryTransport(validToken: "t0")
        let gate = try Self.gate(GateConfiguration(), transport: transport)
        let error = await #expect(throws: GateError.self) { try await gate.send(Self.feed, retry: policy) }
        #expect(error?.message == "GET /feed: \(message)")
        #expect(error?.request == "GET /feed")
        #expect(transport.sends.isEmpty)
    }

    @Test func aTimelineWidthSetBelowTenReadsBackAsTen() {
        var renderer = TimelineRenderer(width: 3)
        #expect(renderer.width == 10)
        renderer.width = 3
        #expect(renderer.width == 10)
    }
}
