import Conductor
import ConductorTestKit
import HTTPTypes
import Synchronization
import Testing

/// One test per error code of every error type, each raising the error through the public
/// API the way an app would, and checking the code and the message the Errors article quotes.
/// A message that embeds something dynamic (an underlying error) is checked exactly anyway,
/// with a test error whose description is known.
@Suite struct ErrorInventoryTests {
    /// An error whose description is known, so messages that embed it can be checked exactly.
    struct Offline: Error {}

    // MARK: - GraphError

    @Suite struct Graph {
        @Test func graphEmptyID() throws {
            var graph = TaskGraph()
            graph.add("") { _ in }
            let error = try #require(throws: GraphError.self) { try graph.validate() }
            #expect(error.code == .emptyID)
            #expect(error.message == "a task or milestone has an empty id")
        }

        @Test func graphDuplicateID() throws {
            var graph = TaskGraph()
            graph.add("config") { _ in }
            graph.add("config") { _ in }
            let error = try #require(throws: GraphError.self) { try graph.validate() }
            #expect(error.code == .duplicateID)
            #expect(error.message == "duplicate id 'config'")
            #expect(error.taskID == "config")
        }

        @Test func graphUnknownDependency() throws {
            var graph = TaskGraph()
            graph.add("sku", dependsOn: ["basicInfo"]) { _ in }
            let error = try #require(throws: GraphError.self) { try graph.start() }
            #expect(error.code == .unknownDependency)
            #expect(error.message == "task 'sku' depends on unknown id 'basicInfo'")
            #expect(error.taskID == "sku")
        }

        @Test func graphCycle() async throws {
            var graph = TaskGraph()
            graph.add("a", dependsOn: ["c"]) { _ in }
            graph.add("b", dependsOn: ["a"]) { _ in }
            graph.add("c", dependsOn: ["b"]) { _ in }
            let error = await #expect(throws: GraphError.self) { try await graph.run() }
            #expect(error?.code == .cycle)
            #expect(error?.message == "dependencies form a loop: a → c → b → a")
        }

        @Test func graphLaterStage() throws {
            let schedule = Schedule {
                Stage("a") { Step("x", dependsOn: ["y"]) { _ in } }
                Stage("b") { Step("y") { _ in } }
            }
            let error = try #require(throws: GraphError.self) { try schedule.start() }
            #expect(error.code == .laterStage)
            #expect(error.message == "step 'x' in stage 'a' depends on 'y', which runs in the later stage 'b'")
            #expect(error.taskID == "x")
        }

        @Test func graphNegativeDuration() throws {
            var graph = TaskGraph()
            graph.add("fetch", options: TaskOptions(timeout: .seconds(-1))) { _ in }
            let error = try #require(throws: GraphError.self) { try graph.start() }
            #expect(error.code == .negativeDuration)
            #expect(error.message == "task 'fetch' has a negative timeout (-1.00 s)")
            #expect(error.taskID == "fetch")
        }

        @Test func graphInvalidConfiguration() async throws {
            var graph = TaskGraph()
            graph.add("fetch") { _ in }
            let limit = await #expect(throws: GraphError.self) { try await graph.run(concurrencyLimit: 0) }
            #expect(limit?.code == .invalidConfiguration)
            #expect(limit?.message == "concurrencyLimit must be at least 1 (got 0)")

            graph.add("config", options: TaskOptions(retry: .attempts(0))) { _ in }
            let retry = try #require(throws: GraphError.self) { try graph.validate() }
            #expect(retry.code == .invalidConfiguration)
            #expect(retry.message == "task 'config' has a retry policy of 0 attempts; it needs at least 1")
            #expect(retry.taskID == "config")

            var limited = TaskGraph()
            limited.add("sync", options: TaskOptions(limits: [TaskLimit(0, name: "database")])) { _ in }
            let capacity = try #require(throws: GraphError.self) { try limited.validate() }
            #expect(capacity.code == .invalidConfiguration)
            #expect(capacity.message == "task 'sync' names limit 'database' of capacity 0; a limit needs at least 1")
            #expect(capacity.taskID == "sync")
        }

        @Test func graphUnknownTask() async throws {
            let (run, latch) = try Self.startHeldRun()
            let error = try #require(throws: GraphError.self) { try run.remove("ghost") }
            #expect(error.code == .unknownTask)
            #expect(error.message == "no task with id 'ghost'")
            latch.open()
            #expect(try await run.report().isSuccess)
        }

        @Test func graphUnknownMilestone() async throws {
            let (run, latch) = try Self.startHeldRun()
            let error = await #expect(throws: GraphError.self) { try await run.reached("firstScreen") }
            #expect(error?.code == .unknownMilestone)
            #expect(error?.message == "no milestone named 'firstScreen'")
            latch.open()
            _ = try await run.report()
        }

        @Test func graphMilestoneMissed() async throws {
            let (run, latch) = try Self.startHeldRun(milestone: "firstScreen")
            run.cancel()
            let error = await #expect(throws: GraphError.self) { try await run.reached("firstScreen") }
            #expect(error?.code == .milestoneMissed)
            #expect(error?.message == "the run ended before milestone 'firstScreen' was reached")
            latch.open()
            _ = try await run.report()
        }

        @Test func graphRunFinished() async throws {
            var graph = TaskGraph()
            graph.add("config") { _ in }
            let run = try graph.start()
            _ = try await run.report()
            let error = try #require(throws: GraphError.self) { try run.add("late") { _ in } }
            #expect(error.code == .runFinished)
            #expect(error.message == "cannot add 'late': the run has finished")
            #expect(error.taskID == "late")
        }

        @Test func graphTaskFailed() async throws {
            var graph = TaskGraph()
            graph.add("config") { _ in throw Offline() }
            let report = try await graph.run()
            let error = try #require(report.outcome.error)
            #expect(error.code == .taskFailed)
            #expect(error.message == "required task 'config' failed: Offline()")
            #expect(error.taskID == "config")
        }

        @Test func graphTimedOut() async throws {
            let clock = ManualClock()
            let latch = Latch()
            var graph = TaskGraph()
            graph.add("sku", options: TaskOptions(timeout: .seconds(2))) { _ in await latch.wait() }
            let run = try graph.start(clock: clock)
            await clock.sleepers(atLeast: 1)
            clock.advance(by: .seconds(2))
            let error = try #require(try await run.report().outcome.error)
            #expect(error.code == .timedOut)
            #expect(error.message == "task 'sku' timed out after 2.00 s")
            latch.open()
        }

        @Test func graphCancelled() async throws {
            let (run, latch) = try Self.startHeldRun(milestone: "firstScreen")
            let waiter = Task { try await run.reached("firstScreen") }
            waiter.cancel()
            let error = await #expect(throws: GraphError.self) { try await waiter.value }
            #expect(error?.code == .cancelled)
            #expect(error?.message == "waiting for milestone 'firstScreen' was cancelled; the run goes on")
            latch.open()
            #expect(try await run.report().isSuccess)
        }

        @Test func graphResultUnavailable() async throws {
            let seen = Recorder<GraphError>()
            var graph = TaskGraph()
            let info = graph.add("basicInfo", options: TaskOptions(failure: .optional)) { _ -> Int in throw Offline() }
            graph.add("page", dependsOn: ["basicInfo"], options: TaskOptions(whenDependencyFails: .runAnyway)) {
                context in
                do throws(GraphError) {
                    _ = try context.value(of: info)
                } catch {
                    seen.append(error)
                }
            }
            _ = try await graph.run()
            let error = try #require(seen.all.first)
            #expect(error.code == .resultUnavailable)
            #expect(error.message == "task 'page' read the result of 'basicInfo', which did not succeed")
            #expect(error.taskID == "page")
        }

        /// What ``GraphRun/value(of:)`` throws, one constructor each: a failed, a skipped, a
        /// removed and a cancelled task, a waiter that gave up, and a handle of another type.
        @Test func graphValueOf() async throws {
            let (run, latch) = try Self.startHeldRun()
            let config = try run.add("config", options: TaskOptions(failure: .optional)) { _ -> Int in throw Offline() }
            let sku = try run.add("sku", dependsOn: ["config"], options: TaskOptions(failure: .optional)) { _ in 1 }
            let later = try run.add("later", dependsOn: ["held"]) { _ in 1 }
            let failed = await #expect(throws: GraphError.self) { try await run.value(of: config) }
            #expect(failed?.code == .taskFailed)
            #expect(failed?.message == "task 'config' failed: Offline()")
            #expect(failed?.underlyingError is Offline)
            let skipped = await #expect(throws: GraphError.self) { try await run.value(of: sku) }
            #expect(skipped?.code == .taskFailed)
            #expect(skipped?.message == "task 'sku' was skipped: 'config' did not succeed")
            try run.add("count") { _ in 3 }
            let mistyped = await #expect(throws: GraphError.self) {
                try await run.value(of: TaskHandle<String>(id: "count"))
            }
            #expect(mistyped?.code == .resultUnavailable)
            #expect(mistyped?.message == "task 'count' does not return String")
            let waiter = Task { try await run.value(of: later) }
            waiter.cancel()
            let gaveUp = await #expect(throws: GraphError.self) { try await waiter.value }
            #expect(gaveUp?.code == .cancelled)
            #expect(gaveUp?.message == "waiting for the value of task 'later' was cancelled; the task goes on")
            #expect(try run.remove("later") == .prevented)
            let removed = await #expect(throws: GraphError.self) { try await run.value(of: later) }
            #expect(removed?.code == .cancelled)
            #expect(removed?.message == "task 'later' was removed and has no value")
            let last = try run.add("last", dependsOn: ["held"]) { _ in 1 }
            run.cancel()
            let cancelled = await #expect(throws: GraphError.self) { try await run.value(of: last) }
            #expect(cancelled?.code == .cancelled)
            #expect(cancelled?.message == "task 'last' ended cancelled and has no value")
            latch.open()
            _ = try await run.report()
        }

        /// A parent joining its subtasks when the run is cancelled.
        @Test func graphCancelledJoining() async throws {
            let childStarted = Latch()
            let seen = Recorder<GraphError>()
            var graph = TaskGraph()
            graph.add("gallery") { context in
                try context.addSubtask("front") { _ in
                    childStarted.open()
                    _ = await Latch().waitCancellable()
                }
                do throws(GraphError) { try await context.join() } catch { seen.append(error) }
            }
            let run = try graph.start(concurrencyLimit: 1)
            await childStarted.wait()
            run.cancel()
            _ = try await run.report()
            let error = try #require(seen.all.first)
            #expect(error.code == .cancelled)
            #expect(error.message == "task 'gallery' stopped waiting for its subtasks: the run was stopped")
            #expect(error.taskID == "gallery")
        }

        /// A run whose only task, `held`, runs until the latch opens.
        static func startHeldRun(milestone: String? = nil) throws -> (GraphRun, Latch) {
            let latch = Latch()
            var graph = TaskGraph()
            // Held until the latch opens or the run cancels it: a cancel that comes after the
            // body began (on a busy machine, it does) ends it, instead of leaving the run, and
            // a test waiting for the run's end before it opens the latch, waiting forever.
            graph.add("held") { _ in
                _ = await latch.waitCancellable()
                try Task.checkCancellation()
            }
            if let milestone { graph.addMilestone(milestone, after: ["held"]) }
            return (try graph.start(), latch)
        }
    }

    // MARK: - HarmonizerError

    @Suite struct Harmonizers {
        @Test func harmonizerEmptyName() throws {
            let registry = HarmonizerRegistry()
            let error = try #require(throws: HarmonizerError.self) {
                try registry.create("", count: 1, on: .immediate) { _ in }
            }
            #expect(error.code == .emptyName)
            #expect(error.message == "a harmonizer's name is the empty string")
        }

        @Test func harmonizerDuplicateName() throws {
            let registry = HarmonizerRegistry()
            try registry.create("sing-along", count: 1, on: .immediate) { _ in }
            let error = try #require(throws: HarmonizerError.self) {
                try registry.create("sing-along", count: 1, on: .immediate) { _ in }
            }
            #expect(error.code == .duplicateName)
            #expect(error.message == "a harmonizer named 'sing-along' is still waiting")
            #expect(error.name == "sing-along")
        }

        @Test func harmonizerNegativeCount() throws {
            let anonymous = try #require(throws: HarmonizerError.self) { try Harmonizer(count: -1) }
            #expect(anonymous.code == .negativeCount)
            #expect(anonymous.message == "a harmonizer was given a negative initial count (-1)")
            let named = try #require(throws: HarmonizerError.self) {
                try HarmonizerRegistry().create("sing-along", count: -2, on: .immediate) { _ in }
            }
            #expect(named.code == .negativeCount)
            #expect(named.message == "harmonizer 'sing-along' was given a negative initial count (-2)")
        }

        @Test func harmonizerNegativeTimeout() throws {
            let error = try #require(throws: HarmonizerError.self) {
                try Harmonizer(participants: ["lead"], timeout: .seconds(-1))
            }
            #expect(error.code == .negativeTimeout)
            #expect(error.message == "a harmonizer was given a negative timeout (-1.00 s)")
        }

        @Test func harmonizerUnknownName() throws {
            let (registry, misuse) = Self.recordingRegistry()
            #expect(!registry.leave("sing-along"))
            #expect(!registry.enter("sing-along"))
            #expect(!registry.stash(1, as: "original", in: "sing-along"))
            #expect(misuse.all.map(\.code) == [.unknownName, .unknownName, .unknownName])
            #expect(
                misuse.all.map(\.message) == [
                    "leave('sing-along') ignored: no harmonizer named 'sing-along' is waiting",
                    "enter('sing-along') ignored: no harmonizer named 'sing-along' is waiting",
                    "stash('sing-along') ignored: no harmonizer named 'sing-along' is waiting",
                ])
        }

        @Test func harmonizerExtraLeave() throws {
            let (registry, misuse) = Self.recordingRegistry()
            try registry.create("sing-along", count: 0, on: .immediate) { _ in }
            #expect(!registry.leave("sing-along"))
            let error = try #require(misuse.all.first)
            #expect(error.code == .extraLeave)
            #expect(error.message == "leave('sing-along') ignored: its counter is already zero")
            #expect(registry.cancel("sing-along"))
        }

        @Test func harmonizerAbsentParticipant() throws {
            let (registry, misuse) = Self.recordingRegistry()
            try registry.create("sing-along", participants: ["lead"], on: .immediate) { _ in }
            #expect(!registry.leave("sing-along", participant: "prompt"))
            let error = try #require(misuse.all.first)
            #expect(error.code == .absentParticipant)
            #expect(error.message == "leave('sing-along', participant: 'prompt') ignored: 'prompt' is not present")
            #expect(registry.cancel("sing-along"))
        }

        @Test func harmonizerAnonymousParticipant() throws {
            let (registry, misuse) = Self.recordingRegistry()
            try registry.create("sing-along", participants: ["lead"], on: .immediate) { _ in }
            #expect(!registry.leave("sing-along"))
            #expect(!registry.enter("sing-along"))
            let thrown = try #require(throws: HarmonizerError.self) { try registry.participant(of: "sing-along") }
            #expect(misuse.all.map(\.code) == [.anonymousParticipant, .anonymousParticipant])
            #expect(thrown.code == .anonymousParticipant)
            #expect(
                misuse.all.map(\.message) == [
                    "leave('sing-along') ignored: harmonizer 'sing-along' waits for named participants; name one",
                    "enter('sing-along') ignored: harmonizer 'sing-along' waits for named participants; name one",
                ])
            #expect(
                thrown.message
                    == "participant(of: 'sing-along') failed: harmonizer 'sing-along' waits for named participants; name one"
            )
            #expect(thrown.name == "sing-along")
        }

        @Test func harmonizerEnded() throws {
            let (registry, misuse) = Self.recordingRegistry()
            try registry.create("sing-along", participants: ["lead"], on: .immediate) { _ in }
            let lead = try registry.participant("lead", of: "sing-along")
            #expect(registry.cancel("sing-along"))
            #expect(!lead.leave())
            let error = try #require(misuse.all.first)
            #expect(error.code == .harmonizerEnded)
            #expect(
                error.message
                    == "leave() as 'lead' ignored: harmonizer 'sing-along', which this participant was made for, has ended"
            )
            #expect(error.name == "sing-along")
        }

        @Test func harmonizerUnknownNameForAHandle() throws {
            let registry = HarmonizerRegistry()
            let anonymous = try #require(throws: HarmonizerError.self) { try registry.participant(of: "sing-along") }
            let named = try #require(throws: HarmonizerError.self) {
                try registry.participant("lead", of: "sing-along")
            }
            #expect(anonymous.code == .unknownName)
            #expect(
                anonymous.message == "participant(of: 'sing-along') failed: no harmonizer named 'sing-along' is waiting"
            )
            #expect(
                named.message
                    == "participant('lead', of: 'sing-along') failed: no harmonizer named 'sing-along' is waiting")
        }

        static func recordingRegistry() -> (HarmonizerRegistry, Recorder<HarmonizerError>) {
            let registry = HarmonizerRegistry()
            let misuse = Recorder<HarmonizerError>()
            registry.onMisuse(on: .immediate) { misuse.append($0) }
            return (registry, misuse)
        }
    }

    // MARK: - GateError

    @Suite struct Gate {
        static func get(_ path: String) -> HTTPRequest {
            HTTPRequest(method: .get, scheme: "https", authority: "example.test", path: path)
        }

        static func makeGate(
            _ transport: MemoryTransport,
            credential: String? = "t0",
            clock: ManualClock = ManualClock(),
            maxAttempts: Int = 3,
            refresh: @escaping @Sendable (String?) async throws -> String = { _ in throw Offline() }
        ) throws(GateError) -> RequestGate<String> {
            var configuration = GateConfiguration(jitterSeed: 1)
            configuration.retry.schedule = .attempts(maxAttempts, backoff: .milliseconds(200))
            return try RequestGate(
                transport: transport,
                credential: credential,
                configuration: configuration,
                clock: clock,
                authorize: { request, token in request.headerFields[.authorization] = "Bearer \(token)" },
                refresh: refresh
            )
        }

        @Test func gateRefreshFailed() async throws {
            let gate = try Self.makeGate(MemoryTransport(validToken: nil), credential: nil)
            let error = await #expect(throws: GateError.self) { try await gate.send(Self.get("/feed")) }
            #expect(error?.code == .refreshFailed)
            #expect(error?.message == "GET /feed: the credential refresh failed: Offline()")
            #expect(error?.request == "GET /feed")
        }

        @Test func gateRetriesExhausted() async throws {
            let transport = MemoryTransport(validToken: "t0")
            transport.state.withLock { $0.script = [.serviceUnavailable] }
            let gate = try Self.makeGate(transport, maxAttempts: 1)
            let error = await #expect(throws: GateError.self) { try await gate.send(Self.get("/feed")) }
            #expect(error?.code == .retriesExhausted)
            #expect(error?.message == "GET /feed: gave up after 1 attempt(s); last: status 503")
            #expect(error?.status == 503)
        }

        @Test func gateRefreshTimedOut() async throws {
            let clock = ManualClock()
            let gate = try Self.makeGate(
                MemoryTransport(validToken: nil), credential: nil, clock: clock,
                refresh: { _ in
                    try await Task.sleep(for: .seconds(3600))
                    return "never"
                })
            let request = Task { try await gate.send(Self.get("/feed")) }
            await clock.sleepers(atLeast: 1, for: .refreshTimeout)
            clock.advance(by: .seconds(30))
            let error = await #expect(throws: GateError.self) { try await request.value }
            #expect(error?.code == .refreshTimedOut)
            #expect(error?.message == "GET /feed: the credential refresh brought no credential within 30.00 s")
            #expect(error?.request == "GET /feed")
        }

        @Test func gateRefreshWindowExceeded() async throws {
            var configuration = GateConfiguration(jitterSeed: 1)
            configuration.refreshWindow = .init(maxRefreshes: 1, period: .seconds(30))
            let gate = try RequestGate<String>(
                transport: MemoryTransport(validToken: nil), credential: "t0", configuration: configuration,
                clock: ManualClock(),
                authorize: { request, token in request.headerFields[.authorization] = "Bearer \(token)" },
                refresh: { _ in "rejected" })
            let error = await #expect(throws: GateError.self) { try await gate.send(Self.get("/feed")) }
            #expect(error?.code == .refreshWindowExceeded)
            #expect(
                error?.message
                    == "GET /feed: the credential needs a refresh again after 1 refresh(es) within 30.00 s; "
                    + "no further refresh is allowed until the oldest leaves the window")
            #expect(error?.status == 401)
        }

        @Test func gateSignedOut() async throws {
            let gate = try Self.makeGate(MemoryTransport(validToken: "t0"))
            gate.signOut()
            let error = await #expect(throws: GateError.self) { try await gate.send(Self.get("/feed")) }
            #expect(error?.code == .signedOut)
            #expect(error?.message == "GET /feed: signed out; the request needs a credential")
            #expect(error?.request == "GET /feed")
        }

        @Test func gateShutDown() async throws {
            let gate = try Self.makeGate(MemoryTransport(validToken: "t0"))
            gate.shutdown()
            let error = await #expect(throws: GateError.self) { try await gate.send(Self.get("/feed")) }
            #expect(error?.code == .shutDown)
            #expect(error?.message == "GET /feed: the gate was shut down")
            #expect(error?.request == "GET /feed")
        }

        // MARK: SchedulerError

        @Test func schedulerShutDown() async throws {
            let scheduler = try PriorityScheduler()
            scheduler.shutdown()
            let submitted = try #require(throws: SchedulerError.self) { try scheduler.submit {} }
            #expect(submitted.code == .shutDown)
            #expect(submitted.message == "the scheduler is shut down")
            let ran = await #expect(throws: SchedulerError.self) { try await scheduler.run {} }
            #expect(ran?.message == "the scheduler is shut down")
        }

        @Test func gateCancelled() async throws {
            let refreshing = Latch()
            let gate = try Self.makeGate(
                MemoryTransport(validToken: nil),
                credential: nil,
                refresh: { _ in
                    await refreshing.wait()
                    return "t1"
                }
            )
            let request = Task { try await gate.send(Self.get("/feed")) }
            for await event in gate.events {
                if case .refreshStarted = event { break }
            }
            request.cancel()
            let error = await #expect(throws: GateError.self) { try await request.value }
            #expect(error?.code == .cancelled)
            #expect(error?.message == "GET /feed was cancelled")
            refreshing.open()
        }

        @Test func gateTransport() async throws {
            let transport = MemoryTransport(validToken: "t0")
            transport.state.withLock { $0.failuresToThrow = 1 }
            let gate = try Self.makeGate(transport, maxAttempts: 1)
            let error = await #expect(throws: GateError.self) { try await gate.send(Self.get("/feed")) }
            #expect(error?.code == .transport)
            #expect(error?.message == "GET /feed: transport failed after 1 attempt(s): TransportDown()")
        }

        @Test func gateTimedOut() async throws {
            let clock = ManualClock()
            let refreshing = Latch()
            let gate = try Self.makeGate(
                MemoryTransport(validToken: nil),
                credential: nil,
                clock: clock,
                refresh: { _ in
                    await refreshing.wait()
                    return "t1"
                }
            )
            let request = Task { try await gate.send(Self.get("/feed"), timeout: .seconds(1)) }
            // The request's deadline and the refresh's, each on a timer of its own.
            await clock.sleepers(atLeast: 1, for: .requestTimeout)
            await clock.sleepers(atLeast: 1, for: .refreshTimeout)
            clock.advance(by: .seconds(1))
            let error = await #expect(throws: GateError.self) { try await request.value }
            #expect(error?.code == .timedOut)
            #expect(error?.message == "GET /feed timed out after 1.00 s")
            refreshing.open()
        }

        @Test func gateRejected() async throws {
            let transport = MemoryTransport(validToken: "t0")
            transport.state.withLock { $0.script = [.notFound] }
            let gate = try Self.makeGate(transport)
            let error = await #expect(throws: GateError.self) { try await gate.send(Self.get("/feed?page=2")) }
            #expect(error?.code == .rejected)
            #expect(error?.message == "GET /feed: the response (status 404) was classified as a failure")
            #expect(error?.status == 404)
        }

        @Test func gateBodyNotReplayable() async throws {
            let transport = MemoryTransport(validToken: "t0")
            transport.state.withLock { $0.script = [.serviceUnavailable] }
            let gate = try Self.makeGate(transport)
            let (chunks, continuation) = AsyncStream<[UInt8]>.makeStream()
            continuation.finish()
            let error = await #expect(throws: GateError.self) {
                try await gate.send(Self.get("/upload"), body: .stream(chunks))
            }
            #expect(error?.code == .bodyNotReplayable)
            #expect(error?.message == "GET /upload needed another attempt, but its body can be sent only once")
            #expect(error?.status == 503)
        }

        @Test func gateInvalidConfiguration() async throws {
            var configuration = GateConfiguration()
            configuration.retry.schedule = .attempts(0, backoff: .milliseconds(200))
            let error = #expect(throws: GateError.self) {
                try RequestGate<String>(
                    transport: MemoryTransport(validToken: "t0"), configuration: configuration,
                    authorize: { request, token in request.headerFields[.authorization] = "Bearer \(token)" },
                    refresh: { _ in "t1" })
            }
            #expect(error?.code == .invalidConfiguration)
            #expect(error?.message == "GateConfiguration.retry.schedule.maxAttempts must be at least 1 (got 0)")
            #expect(error?.request == nil)
        }

        @Test func gateIncompleteURL() async throws {
            let gate = try Self.makeGate(MemoryTransport(validToken: "t0"))
            let error = await #expect(throws: GateError.self) {
                try await gate.send(HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/feed"))
            }
            #expect(error?.code == .incompleteURL)
            #expect(
                error?.message == "GET /feed has no URL: it lacks a scheme and an authority, and the gate has no "
                    + "GateConfiguration.baseURL to take them from")
            #expect(error?.request == "GET /feed")
        }

        @Test func gateNegativeDuration() async throws {
            let transport = MemoryTransport(validToken: "t0")
            let error = #expect(throws: GateError.self) {
                try RequestGate<String>(
                    transport: transport, credential: "t0",
                    configuration: GateConfiguration(requestTimeout: .seconds(-1)), clock: ManualClock(),
                    authorize: { request, token in request.headerFields[.authorization] = "Bearer \(token)" },
                    refresh: { _ in "t1" })
            }
            #expect(error?.code == .negativeDuration)
            #expect(error?.message == "GateConfiguration.requestTimeout is negative (-1.00 s)")
            #expect(error?.request == nil)

            let healthy = try Self.makeGate(transport)
            let request = await #expect(throws: GateError.self) {
                try await healthy.send(Self.get("/feed"), timeout: .seconds(-1))
            }
            #expect(request?.code == .negativeDuration)
            #expect(request?.message == "GET /feed: timeout is negative (-1.00 s)")
            #expect(transport.sends.isEmpty)
        }
    }

    // MARK: - AssemblyError

    @Suite struct Assemblies {
        @Test func assemblyUnknownService() async throws {
            let assembly = Assembly()
            let error = await #expect(throws: AssemblyError.self) { try await assembly.resolve(Int.self, name: "port") }
            #expect(error?.code == .unknownService)
            #expect(error?.message == "no service Int[\"port\"] is registered")
            #expect(error?.path == ["Int[\"port\"]"])
        }

        @Test func assemblyCycle() async throws {
            let assembly = Assembly()
            assembly.register(Tracker.self) { resolver in
                _ = try await resolver.resolve(SecureStore.self)
                return Tracker()
            }
            assembly.register(SecureStore.self) { resolver in
                _ = try await resolver.resolve(Tracker.self)
                return SecureStore()
            }
            let error = await #expect(throws: AssemblyError.self) { try await assembly.resolve(Tracker.self) }
            #expect(error?.code == .cycle)
            #expect(error?.message == "factories form a loop: Tracker → SecureStore → Tracker")
            #expect(error?.path == ["Tracker", "SecureStore", "Tracker"])
        }

        @Test func assemblyNotOnMain() async throws {
            let assembly = Assembly()
            assembly.register(Tracker.self) { _ in Tracker() }
            // A detached task runs on the global executor, never on the main thread.
            let error = await Task.detached {
                #expect(throws: AssemblyError.self) { try assembly.resolveOnMain(Tracker.self) }
            }.value
            #expect(error?.code == .notOnMain)
            #expect(
                error?.message == "resolveOnMain(Tracker) was called off the main thread; use `await resolve` there")
        }

        struct Tracker: Sendable {}
        struct SecureStore: Sendable {}
    }

    // MARK: - LaunchError

    @Suite struct Launch {
        @Test func launchEmptyName() throws {
            let error = try #require(throws: LaunchError.self) { try Launcher().add(TestStartupTask("")) }
            #expect(error.code == .emptyName)
            #expect(error.message == "a start-up task or readiness set has an empty name")
        }

        @Test func launchDuplicateName() throws {
            let launcher = Launcher()
            try launcher.add(TestStartupTask("config"))
            let error = try #require(throws: LaunchError.self) { try launcher.addReadiness("config", after: []) }
            #expect(error.code == .duplicateName)
            #expect(error.message == "'config' was already added")
            #expect(error.taskName == "config")
        }

        @Test func launchUnknownDependency() throws {
            let error = try #require(throws: LaunchError.self) {
                try Launcher().add(TestStartupTask("sku", dependencies: ["basicInfo"]))
            }
            #expect(error.code == .unknownDependency)
            #expect(
                error.message
                    == "'sku' depends on 'basicInfo', which has not been added: add 'basicInfo' before 'sku'"
                    + " (dependencies are added first, so tasks cannot depend on each other in a cycle)")
            #expect(error.taskName == "sku")
        }

        @Test func launchUnknownReadiness() async throws {
            let error = try await #require(throws: LaunchError.self) { try await Launcher().ready("firstScreen") }
            #expect(error.code == .unknownReadiness)
            #expect(error.message == "no readiness set named 'firstScreen'")
        }

        @Test func launchFinished() async throws {
            let launcher = Launcher()
            try launcher.add(TestStartupTask("config"))
            try launcher.start()
            _ = try await launcher.report()
            let error = try #require(throws: LaunchError.self) { try launcher.add(TestStartupTask("late")) }
            #expect(error.code == .launchFinished)
            #expect(error.message == "cannot add 'late': the launch has ended")
            #expect(error.taskName == "late")
        }

        @Test func launchTaskFailed() async throws {
            let launcher = Launcher()
            try launcher.add(TestStartupTask("config") { throw Offline() })
            let error = await #expect(throws: LaunchError.self) { try await launcher.run() }
            #expect(error?.code == .taskFailed)
            #expect(error?.message == "required task 'config' failed: Offline()")
            #expect(error?.taskName == "config")
        }

        @Test func launchEnded() async throws {
            let latch = Latch()
            let launcher = Launcher()
            try launcher.add(TestStartupTask("config") { await latch.wait() })
            try launcher.addReadiness("firstScreen", after: ["config"])
            try launcher.start()
            launcher.cancel()
            let readiness = try await launcher.ready("firstScreen")
            latch.open()
            guard case .failed(let error) = readiness else {
                Issue.record("expected a failure, got \(readiness)")
                return
            }
            #expect(error.code == .launchEnded)
            #expect(error.message == "the launch ended before 'firstScreen' was ready: cancelled")
        }

        @Test func launchCycle() throws {
            let launcher = Launcher()
            try launcher.add(TestStartupTask("a", dependencies: []))
            try launcher.add(TestStartupTask("b", dependencies: ["a"]))
            launcher.remove("a")
            try launcher.add(TestStartupTask("a", dependencies: ["b"]))
            let error = try #require(throws: LaunchError.self) { try launcher.start() }
            #expect(error.code == .cycle)
            #expect(error.message == "dependencies form a loop: b → a → b")

            let itself = try #require(throws: LaunchError.self) {
                try Launcher().add(TestStartupTask("a", dependencies: ["a"]))
            }
            #expect(itself.code == .cycle)
            #expect(itself.message == "dependencies form a loop: a → a")
            #expect(itself.taskName == "a")
        }

        @Test func launchNegativeDuration() async throws {
            let launcher = Launcher()
            let error = try #require(throws: LaunchError.self) {
                try launcher.add(
                    TestStartupTask("config", options: TaskOptions(retry: .attempts(2, backoff: .seconds(-1)))))
            }
            #expect(error.code == .negativeDuration)
            #expect(error.message == "task 'config' has a negative retry backoff (-1.00 s)")
            #expect(error.taskName == "config")

            try launcher.addReadiness("firstScreen", after: [])
            let waiting = try await #require(throws: LaunchError.self) {
                try await launcher.ready("firstScreen", timeout: .seconds(-1))
            }
            #expect(waiting.code == .negativeDuration)
            #expect(waiting.message == "the wait for 'firstScreen' was given a negative timeout (-1.00 s)")
        }

        @Test func launchInvalidConfiguration() throws {
            let error = try #require(throws: LaunchError.self) {
                try Launcher().add(TestStartupTask("config", options: TaskOptions(retry: .attempts(0))))
            }
            #expect(error.code == .invalidConfiguration)
            #expect(error.message == "task 'config' has a retry policy of 0 attempts; it needs at least 1")
            #expect(error.taskName == "config")
        }

        @Test func launchCancelled() async throws {
            let latch = Latch()
            let launcher = Launcher()
            try launcher.add(TestStartupTask("config") { await latch.wait() })
            try launcher.start()
            launcher.cancel()
            let error = await #expect(throws: LaunchError.self) { try await launcher.run() }
            latch.open()
            #expect(error?.code == .cancelled)
            #expect(error?.message == "the launch was cancelled")
        }

        @Test func launchUndoFailed() async throws {
            struct Refused: Error, CustomStringConvertible {
                var description: String { "refused" }
            }
            let launcher = Launcher("database")
            try launcher.add(ClosureStartupTask("pool", run: {}, undo: { throw Refused() }))
            try await launcher.run()
            let error = await #expect(throws: LaunchError.self) { try await launcher.undo() }
            #expect(error?.code == .undoFailed)
            #expect(error?.message == "shutdown of 'database': undo of 'pool' failed: refused")
            #expect(error?.taskName == "pool")
        }

        @Test func launchNotStarted() async throws {
            let clock = ManualClock()
            let launcher = Launcher("app", clock: clock)
            try launcher.addReadiness("firstScreen", after: [])
            async let answer = try launcher.ready("firstScreen", timeout: .seconds(2))
            await clock.sleepers(atLeast: 1, for: .launchReadyTimeout)
            clock.advance(by: .seconds(2))
            let readiness = try await answer
            guard case .failed(let error) = readiness else {
                Issue.record("expected a failure, got \(readiness)")
                return
            }
            #expect(error.code == .notStarted)
            #expect(
                error.message
                    == "the wait for 'firstScreen' timed out after 2.00 s: launcher 'app' has not been started")
        }
    }

    // MARK: - Executors

    /// A wrong-executor access is a programmer error reported through `IsolationFailure`
    /// (a crash in an app); a test replaces the crash with a handler to read the message.
    @Test func confinedOffItsExecutorNamesTheTypeAndTheExecutor() {
        let messages = Recorder<String>()
        let confined = Confined(0, on: QueueExecutor(label: "background"))
        let record: @Sendable (String) -> Void = { messages.append($0) }
        IsolationFailure.$handler.withValue(record) {
            _ = confined.withValue { $0 }
        }
        #expect(messages.all == ["Confined<Int> was accessed off its executor: expected QueueExecutor 'background'"])
    }
}

extension RunOutcome {
    /// The error of a failed run.
    fileprivate var error: GraphError? {
        if case .failed(let error) = self { return error }
        return nil
    }
}
