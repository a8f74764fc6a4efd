import ConductorTestKit
import HTTPTypes
import Testing

@testable import ConductorAssembly
@testable import ConductorCore
@testable import ConductorGate
@testable import ConductorGraph
@testable import ConductorHarmonizer
@testable import ConductorLaunch
@testable import ConductorReports

/// Every primitive lets go of everything it made once it has ended and its user has dropped
/// it: the object, its event journal, its deadline timer (and the timer's task), and the
/// delivery tasks of its observers. A retain cycle or a task that never ends keeps memory
/// for the life of the process in an app that opens the same page a thousand times.
///
/// The last references can be held by a task that is just returning (a run's driver after
/// it published the report), so each check yields until the references are gone, a bounded
/// number of times; nothing here waits for time to pass.
@Suite(.timeLimit(.minutes(1))) struct ReleaseTests {
    /// Weak references to what a primitive made.
    private final class Watched: @unchecked Sendable {
        // Only read and written by the test's own task.
        private var references: [(name: String, isGone: () -> Bool)] = []

        func watch(_ name: String, _ object: AnyObject?) {
            guard let object else {
                Issue.record("\(name) was not found: the test no longer knows where to look")
                return
            }
            weak let reference = object
            references.append((name, { reference == nil }))
        }

        /// Also looks up a stored property by name (most are private).
        func watch(_ name: String, in owner: AnyObject, label: String) {
            let found = Mirror(reflecting: owner).descendant(label)
            watch("\(name) (\(label))", found.map { $0 as AnyObject })
        }

        /// Fails the test, naming what is still alive, unless everything watched is gone
        /// within `yields` turns of the runtime.
        func expectReleased(yields: Int = 20_000, sourceLocation: SourceLocation = #_sourceLocation) async throws {
            for _ in 0..<yields {
                if references.allSatisfy({ $0.isGone() }) { return }
                await Task.yield()
                try Task.checkCancellation()
            }
            let alive = references.filter { !$0.isGone() }.map(\.name)
            #expect(alive.isEmpty, "still alive: \(alive)", sourceLocation: sourceLocation)
        }
    }

    // MARK: - Graph and schedule

    @Test func aGraphRunIsReleasedWithItsJournalTimerAndObserversAfterItsReport() async throws {
        let watched = Watched()
        do {
            var graph = TaskGraph()
            graph.add("timed", options: TaskOptions(timeout: .seconds(60))) { _ in }
            graph.add("after", dependsOn: ["timed"]) { _ in }
            graph.addMilestone("ready", after: ["after"])
            let run = try graph.start()
            let observer = run.observe(on: .immediate) { _ in }
            watched.watch("run", run)
            watched.watch("storage", run.storage)
            watched.watch("storage", in: run.storage, label: "timer")
            try await run.reached("ready")
            #expect(try await run.report().outcome == .completed)
            #expect(await observer.finished())
        }
        try await watched.expectReleased()
    }

    /// A run held open, whose values were awaited from outside, is released once it is
    /// closed and has reported: neither the waiters nor the open state keep it.
    @Test func anOpenRunIsReleasedAfterItIsClosed() async throws {
        let watched = Watched()
        do {
            let run = try TaskGraph().start(staysOpen: true)
            watched.watch("run", run)
            watched.watch("storage", run.storage)
            let first = try run.add("first") { _ in 1 }
            let second = try run.add("second", dependsOn: ["first"]) { _ in 2 }
            #expect(try await run.value(of: first) + run.value(of: second) == 3)
            run.close()
            #expect(try await run.report().outcome == .completed)
        }
        try await watched.expectReleased()
    }

    /// Bodies that used their run through their context (added a task, awaited a milestone,
    /// removed a task) hold it only while they run: the run is released after its report.
    @Test func aRunWhoseBodiesUsedTheirContextsRunIsReleased() async throws {
        let watched = Watched()
        do {
            var graph = TaskGraph()
            graph.add("first") { context in
                try context.run.add("added", dependsOn: ["first"]) { context in
                    try context.run.remove("removed")
                }
                try context.run.add("removed", dependsOn: ["added"]) { _ in }
            }
            graph.addMilestone("ready", after: ["first"])
            graph.add("waiter") { context in try await context.run.reached("ready") }
            let run = try graph.start()
            watched.watch("run", run)
            watched.watch("storage", run.storage)
            let report = try await run.report()
            #expect(report.outcome == .completed)
            #expect(report.tasks.map(\.id).sorted() == ["added", "first", "removed", "waiter"])
        }
        try await watched.expectReleased()
    }

    /// The handle of an observer is dropped before the run starts: its delivery task still
    /// ends with the run.
    @Test func aRunWhoseObserverHandleWasDroppedBeforeItStartedIsReleased() async throws {
        let watched = Watched()
        do {
            var graph = TaskGraph()
            graph.add("a") { _ in }
            let run = try graph.start()
            _ = run.observe(on: .immediate) { _ in }
            watched.watch("storage", run.storage)
            _ = try await run.report()
        }
        try await watched.expectReleased()
    }

    @Test func aCancelledRunIsReleased() async throws {
        let watched = Watched()
        let hold = Latch()
        do {
            var graph = TaskGraph()
            graph.add("held", options: TaskOptions(timeout: .seconds(60))) { _ in await hold.wait() }
            let run = try graph.start()
            watched.watch("storage", run.storage)
            watched.watch("storage", in: run.storage, label: "timer")
            run.cancel()
            _ = try await run.report()
        }
        hold.open()
        try await watched.expectReleased()
    }

    @Test func aScheduleRunIsReleased() async throws {
        let watched = Watched()
        do {
            let schedule = Schedule {
                Stage("first") { Step("a") { _ in } }
                Milestone("shown")
                Stage("second") { Step("b") { _ in } }
            }
            let run = try schedule.start()
            let observer = run.observe(on: .immediate) { _ in }
            watched.watch("storage", run.storage)
            #expect(try await run.report().outcome == .completed)
            #expect(await observer.finished())
        }
        try await watched.expectReleased()
    }

    // MARK: - Launcher

    @Test func aLauncherIsReleasedWithItsRunAfterItsLaunch() async throws {
        let watched = Watched()
        do {
            let launcher = Launcher()
            try launcher.add(TestStartupTask("config"))
            try launcher.add(TestStartupTask("network", dependencies: ["config"]))
            let observer = launcher.observe(on: .immediate, RecordingObserver())
            try await launcher.run()
            #expect(await observer.finished())
            watched.watch("launcher", launcher)
            // The launch's run, which the launcher's state holds once it is under way.
            watched.watch("launcher's launch", launcher.state.withLock { $0.launched })
        }
        try await watched.expectReleased()
    }

    /// The handle of an observer is dropped before the launch starts: its delivery task still
    /// ends with the launch, and lets go of the observer and the launch's event log.
    @Test func aLauncherWhoseObserverHandleWasDroppedBeforeItsLaunchIsReleased() async throws {
        let watched = Watched()
        do {
            let launcher = Launcher()
            try launcher.add(TestStartupTask("config"))
            do {
                let observer = RecordingObserver()
                _ = launcher.observe(on: .immediate, observer)
                watched.watch("observer's recorder", observer.heard)
            }
            watched.watch("launcher", launcher)
            watched.watch("launcher", in: launcher, label: "log")
            try await launcher.run()
            // The launch's run, which the launcher's state holds once it is under way.
            watched.watch("launcher's launch", launcher.state.withLock { $0.launched })
        }
        try await watched.expectReleased()
    }

    // MARK: - Harmonizer and registry

    @Test func aHarmonizerWithATimeoutIsReleasedWithItsTimerAfterItsOutcome() async throws {
        let watched = Watched()
        do {
            let harmonizer = try Harmonizer(count: 1, timeout: .seconds(60))
            harmonizer.onOutcome(on: .immediate) { _ in }
            watched.watch("harmonizer", harmonizer)
            // Its journal is a value in its state (a `JournalBuffer`), released with it.
            watched.watch("harmonizer", in: harmonizer, label: "timer")
            #expect(harmonizer.leave())
            #expect(await harmonizer.outcome.isCompleted)
        }
        try await watched.expectReleased()
    }

    @Test func aRegistryLetsGoOfAHarmonizerOnceItsOutcomeIsDelivered() async throws {
        let registry = HarmonizerRegistry()
        let watched = Watched()
        let delivered = Latch()
        _ = try registry.create("page", count: 1, timeout: .seconds(60), on: .immediate) { _ in delivered.open() }
        watched.watch("harmonizer", registry.harmonizer(named: "page"))
        #expect(registry.leave("page"))
        // This thread's lookup cache moves on (see the next test).
        #expect(registry.count("another") == 0)
        await delivered.wait()
        try await watched.expectReleased()
        #expect(registry.harmonizer(named: "page") == nil)
    }

    @Test func aRegistryIsReleasedWithItsTimer() async throws {
        let watched = Watched()
        do {
            let registry = HarmonizerRegistry()
            _ = try registry.create("page", count: 1, timeout: .seconds(60), on: .immediate) { _ in }
            watched.watch("registry", registry)
            watched.watch("registry", in: registry, label: "timer")
            #expect(registry.leave("page"))
            // Each thread remembers the last harmonizer it looked up, and with it the
            // registry's timer, until it looks up another name (HarmonizerLookupCache): with
            // no suspension in between, this lookup runs on the same thread and moves it on.
            #expect(registry.count("another") == 0)
        }
        try await watched.expectReleased()
    }

    // MARK: - Gate and scheduler

    @Test func aGateShutDownWithRequestsParkedIsReleased() async throws {
        let watched = Watched()
        let refreshStarted = Latch()
        let refreshHold = Latch()
        do {
            let authority = MemoryAuthority(transport: MemoryTransport(validToken: nil))
            let gate = try RequestGate<String>(
                transport: authority.transport,
                credential: nil,
                configuration: GateConfiguration(jitterSeed: 1),
                clock: ManualClock(),
                authorize: { request, token in request.headerFields[.authorization] = "Bearer \(token)" },
                refresh: { _ in
                    refreshStarted.open()
                    await refreshHold.wait()
                    return try authority.refresh()
                }
            )
            watched.watch("gate", gate)
            watched.watch("sender", gate.sender)
            watched.watch("storage", gate.storage)
            // The journal and the slots live in the storage's one lock: watching it covers them.
            watched.watch("sender", in: gate.sender, label: "requestTimer")
            watched.watch(
                "storage (refreshRunner.timer)",
                Mirror(reflecting: gate.storage).descendant("refreshRunner", "timer").map { $0 as AnyObject })
            let parked = Task {
                try await gate.send(HTTPRequest(method: .get, scheme: "https", authority: "x.test", path: "/a"))
            }
            await refreshStarted.wait()
            // The refresh may start before the request parks behind it: shut down only once
            // it has, so the test is about a parked request every time.
            await gate.parkedRequests(atLeast: 1)
            gate.shutdown()
            _ = await parked.result
        }
        refreshHold.open()
        try await watched.expectReleased()
    }

    @Test func aSchedulerIsReleasedAfterItsWork() async throws {
        let watched = Watched()
        do {
            let scheduler = try PriorityScheduler(maxConcurrent: 2)
            watched.watch("scheduler", scheduler)
            for _ in 0..<10 { try scheduler.submit {} }
            try await scheduler.whenIdle()
            #expect(try await scheduler.run { 1 } == 1)
            scheduler.shutdown()
        }
        try await watched.expectReleased()
    }

    // MARK: - Assembly

    @Test func anAssemblyIsReleasedWithWhatItBuilt() async throws {
        final class Widget: Sendable {}
        let watched = Watched()
        do {
            let assembly = Assembly()
            assembly.register(Widget.self) { _ in Widget() }
            let widget: Widget = try await assembly.resolve()
            watched.watch("assembly", assembly)
            watched.watch("table", assembly.root)
            watched.watch("widget", widget)
        }
        try await watched.expectReleased()
    }
}
