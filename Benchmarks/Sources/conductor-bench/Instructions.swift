import CallgrindMarkers
import Conductor
import ConductorJobs
import Dispatch
import Foundation
import InMemoryTracing
import Synchronization
import Tracing

// `conductor-bench instructions NAME N` runs one contender once at size N, for callgrind
// (scripts/instructions). Its `main` never awaits: valgrind 3.19 crashes once the main thread
// enters `dispatchMain()`, which an async `main` does to run its top-level code. The main thread
// blocks on a semaphore instead while a detached task does the work between two marker calls.

/// One contender as `conductor-bench instructions` runs it: `prepare(n)` does what the timed
/// benchmark leaves untimed (building the graph, setting up the count) and returns the work it
/// times.
struct CountedContender: Sendable {
    /// `scenario/contender`, one word each, for the command line.
    let name: String
    /// Conductor's side of the scenario; the others are baselines.
    let isSubject: Bool
    /// Counted only when named (`scripts/instructions --filter`), never by CI's check.
    var isManual = false
    /// How many of size n make one unit: the contender runs n / unitsOf units (jobs), and
    /// scripts/instructions counts per unit. For work too slow under valgrind at CI's sizes.
    var unitsOf = 1
    let prepare: @Sendable (_ n: Int) async -> @Sendable () async -> Void

    var scenario: Substring { name.prefix { $0 != "/" } }
}

/// The contenders `scripts/instructions` counts, each scenario's subject first.
let countedContenders: [CountedContender] = [
    CountedContender(name: "graph.independent/TaskGraph.run", isSubject: true) { n in
        let graph = independentGraph(n)
        return { _ = try! await graph.run() }
    },
    CountedContender(name: "graph.independent/telemetry-disabled", isSubject: false) { n in
        let graph = independentGraph(n)
        return { _ = try! await graph.run(telemetry: .disabled) }
    },
    CountedContender(name: "graph.independent/in-memory-tracer", isSubject: false) { n in
        let graph = independentGraph(n)
        let tracer = InMemoryTracer()
        return { _ = try! await graph.run(telemetry: Telemetry(tracer: tracer)) }
    },
    CountedContender(name: "graph.independent/withTaskGroup", isSubject: false) { n in
        { await withTaskGroupIndependent(n) }
    },
    CountedContender(name: "graph.independent/addImmediateTask", isSubject: false) { n in
        { await addImmediateTaskIndependent(n) }
    },
    // graph.add (issue 36): `GraphRun.add` of one no-op task to an open run that holds 1,000
    // ended tasks, each add counted whole (its task's run and end included, as the run's close
    // and report); its goal divides it by graph.independent/TaskGraph.run. The manual variant
    // holds 10,000 ended tasks: flat in the run's size means the same count per add.
    CountedContender(name: "graph.add/GraphRun.add", isSubject: true) { n in
        await addToOpenRun(n, holding: 1_000)
    },
    CountedContender(name: "graph.add/GraphRun.add-10k-in-run", isSubject: false, isManual: true) { n in
        await addToOpenRun(n, holding: 10_000)
    },
    // graph.dag with equal bodies (issue 20): one empty async closure per node in every
    // contender, the graph's `{ _ in }` and the baselines' `{}`.
    CountedContender(name: "graph.dag/TaskGraph.run", isSubject: true) { n in
        let graph = LayeredDAG(count: n, width: 100).graph(body: NodeBody.noOp.operation)
        return { _ = try! await graph.run() }
    },
    CountedContender(name: "graph.dag/task-per-node", isSubject: false) { n in
        let dag = LayeredDAG(count: n, width: 100)
        let work = NodeBody.noOp.work
        return { await taskPerNode(dag, work) }
    },
    CountedContender(name: "graph.dag/ready-count-spawning", isSubject: false) { n in
        let table = LayeredDAG(count: n, width: 100).table()
        let work = NodeBody.noOp.work
        return { await readyCountSchedulerSpawning(table, work) }
    },
    CountedContender(name: "graph.dag/ready-count-inline", isSubject: false) { n in
        let table = LayeredDAG(count: n, width: 100).table()
        let work = NodeBody.noOp.work
        return { await readyCountScheduler(table, work) }
    },
    // graph.dag's subject before issue 20 (`{ _ in await work() }`: two async frames per
    // node), kept for one release; manual, so CI's check does not pay for it.
    CountedContender(name: "graph.dag-old-body/TaskGraph.run", isSubject: false, isManual: true) { n in
        let graph = LayeredDAG(count: n, width: 100).graphWithOldBody()
        return { _ = try! await graph.run() }
    },
    // graph.timeout (issue 36): n independent no-op tasks, each with a timeout long enough
    // never to fire, against the same graph without one (graph.independent's shape).
    CountedContender(name: "graph.timeout/TaskGraph.run+timeout", isSubject: true) { n in
        let graph = independentGraph(n, options: TaskOptions(timeout: .seconds(60)))
        return { _ = try! await graph.run() }
    },
    CountedContender(name: "graph.timeout/TaskGraph.run", isSubject: false) { n in
        let graph = independentGraph(n)
        return { _ = try! await graph.run() }
    },
    // graph.limit: every task names one shared TaskLimit(4); each body yields once.
    CountedContender(name: "graph.limit/TaskGraph.run", isSubject: true) { n in
        let graph = limitGraph(n, limit: TaskLimit(4, name: "bench"))
        return { _ = try! await graph.run() }
    },
    CountedContender(name: "graph.limit/async-semaphore", isSubject: false) { n in
        { await semaphoreTasks(n, semaphore: AsyncSemaphore(4)) }
    },
    CountedContender(name: "gate.schedule/PriorityScheduler.submit", isSubject: true) { n in
        { await prioritySchedulerSubmit(jobs: n, limit: 8) }
    },
    CountedContender(name: "gate.schedule/hand-limited-TaskGroup", isSubject: false) { n in
        { await handLimitedTaskGroup(jobs: n, limit: 8) }
    },
    // gate.timeout (issue 36): a burst of n requests through a gate with a valid token, each with a
    // `timeout:` long enough never to fire, against the same burst without one.
    CountedContender(name: "gate.timeout/RequestGate.send+timeout", isSubject: true) { n in
        requestContender(n, timeout: .seconds(600))
    },
    CountedContender(name: "gate.timeout/RequestGate.send", isSubject: false) { n in
        requestContender(n)
    },
    // gate.tracer (issue 36): the same burst with a tracer bootstrapped that records nothing but
    // that Conductor cannot tell from a real one (a `NoOpTracer` is recognised and switched off,
    // which would measure nothing), against tracing disabled. One contender per process, so
    // bootstrapping here touches no other contender.
    CountedContender(name: "gate.tracer/RequestGate.send+noop-tracer", isSubject: true) { n in
        InstrumentationSystem.bootstrap(OpaqueNoOpTracer())
        return requestContender(n)
    },
    CountedContender(name: "gate.tracer/RequestGate.send", isSubject: false) { n in
        requestContender(n)
    },
    // A refresh storm (issue 36): one burst through a gate (`stormGate` + `stormBurst`, the part
    // gate.refresh-storm times) whose token has expired — the first request's 401 starts the one
    // refresh, and every other request waits for it (queued behind the refresh's `unique` slot,
    // or parked behind it), then goes — against the same burst with a valid token. The refresh
    // is held until the burst has spawned every request (`holdingRefreshUntil`): without that,
    // how many requests waited depended on how threads interleaved (on a loaded machine, at
    // times none), and the count with it. The harness prints what the burst did to standard
    // error (`storm: P parked …, Q queued`). `all-park` (manual) holds the refresh for 3 s of
    // valgrind's slow time instead (the sleep costs no instructions).
    CountedContender(name: "gate.refresh-storm/RequestGate.send+expired", isSubject: true) { n in
        stormContender(n, server: StormServer(valid: "t1"), holdingRefresh: true)
    },
    CountedContender(name: "gate.refresh-storm/RequestGate.send", isSubject: false) { n in
        stormContender(n, server: StormServer(valid: "t0"), holdingRefresh: true)
    },
    CountedContender(name: "gate.refresh-storm/all-park", isSubject: false, isManual: true) { n in
        stormContender(n, server: StormServer(valid: "t1"), refreshDelay: .seconds(3))
    },
    // harmonizer.countdown: the object's anonymous leave() from two threads, the timed
    // scenario's subject, against DispatchGroup.leave().
    CountedContender(name: "harmonizer.countdown/Harmonizer.leave", isSubject: true) { n in
        harmonizerCountDown(n)
    },
    CountedContender(name: "harmonizer.countdown/DispatchGroup", isSubject: false) { n in
        dispatchGroupCountDown(n)
    },
    // assembly.resolve (issue 36): n resolves of a registered singleton that was created before
    // counting starts, against the same n lookups in a `Mutex<[ObjectIdentifier: any Sendable]>`
    // with an `as!` cast to the service type (assemblyScenario's timed pair).
    CountedContender(name: "assembly.resolve/Assembly.resolve", isSubject: true) { n in
        let assembly = Assembly()
        assembly.register(AnalyticsService.self) { _ in AnalyticsService() }
        _ = try! await assembly.resolve(AnalyticsService.self)
        return {
            var sum = 0
            for _ in 0..<n { sum &+= try! await assembly.resolve(AnalyticsService.self).id }
            precondition(sum == 42 * n)
        }
    },
    CountedContender(name: "assembly.resolve/mutex-dictionary", isSubject: false) { n in
        let dictionary = Mutex<[ObjectIdentifier: any Sendable]>([
            ObjectIdentifier(AnalyticsService.self): AnalyticsService()
        ])
        return {
            var sum = 0
            for _ in 0..<n {
                let service = dictionary.withLock { $0[ObjectIdentifier(AnalyticsService.self)] }
                sum &+= (service as! AnalyticsService).id
            }
            precondition(sum == 42 * n)
        }
    },
    // jobs.dispatch (issue 37): a due job's dispatch. n / 10 jobs of a no-op handler are committed
    // before counting; counted are the queue's start and `whenIdle()` — each job claimed (one
    // write transaction per claim of up to concurrencyLimit, 4, jobs), run as a task of the
    // queue's graph run, and its end committed (one write transaction each), at synchronous FULL —
    // per job, against a no-op task of a plain graph run of n (graph.independent's subject). A
    // tenth because a job costs thousands of graph tasks' instructions: one count of 1,000 and
    // 2,000 jobs took 145 s under valgrind, and five would take CI's step past its time limit.
    // The graph keeps n: at a tenth, its fixed costs swamp the difference.
    CountedContender(name: "jobs.dispatch/JobQueue.start+whenIdle", isSubject: true, unitsOf: 10) { n in
        counted(await dueJobsDispatch(n))
    },
    CountedContender(name: "jobs.dispatch/TaskGraph.run", isSubject: false) { n in
        let graph = independentGraph(n)
        return { _ = try! await graph.run() }
    },
    // jobs.enqueue's two sides (manual), n enqueues (or raw GRDB inserts) each in its own write
    // transaction at synchronous FULL: where the time the timed scenario's ratio shows goes.
    CountedContender(name: "jobs.enqueue/JobQueue.enqueue", isSubject: false, isManual: true) { n in
        counted(queueEnqueue(n, synchronous: .full))
    },
    CountedContender(name: "jobs.enqueue/GRDB-insert", isSubject: false, isManual: true) { n in
        counted(rawInsert(n, synchronous: .full))
    },
    CountedContender(name: "harmonizer.registry/countDown", isSubject: true) { n in registryCountDown(n) },
    CountedContender(name: "harmonizer.registry/DispatchGroup", isSubject: false) { n in
        dispatchGroupCountDown(n)
    },
    CountedContender(name: "harmonizer.registry-handle/countDown", isSubject: true) { n in
        registryHandleCountDown(n)
    },
    CountedContender(name: "harmonizer.registry-handle/DispatchGroup", isSubject: false) { n in
        dispatchGroupCountDown(n)
    },
]

/// The gate of the storm contender being counted: after counting stops, what its burst did
/// (requests parked, queued, re-sent) goes to standard error, since it varies between runs.
private let countedStormGate = Mutex<RequestGate<String>?>(nil)

private func stormContender(
    _ n: Int, server: StormServer, refreshDelay: Duration? = nil, holdingRefresh: Bool = false
) -> @Sendable () async -> Void {
    let spawned = holdingRefresh ? CompletionCounter(expected: 1) : nil
    let gate = stormGate(
        n, startingWith: "t0", server: server, refreshDelay: refreshDelay, holdingRefreshUntil: spawned)
    countedStormGate.withLock { $0 = gate }
    return { await stormBurst(n, through: gate, spawned: spawned) }
}

/// What the contender being counted leaves to do once counting has stopped (remove a job
/// queue's file).
private let countedCleanup = Mutex<(@Sendable () -> Void)?>(nil)

/// `side`'s work, to count; its cleanup runs after counting stops.
private func counted(_ side: JobFileWork) -> @Sendable () async -> Void {
    countedCleanup.withLock { $0 = side.cleanup }
    return side.work
}

/// A gate whose token stays valid and a burst of `n` requests through it, each with `timeout`.
private func requestContender(_ n: Int, timeout: Duration? = nil) -> @Sendable () async -> Void {
    let gate = stormGate(n, startingWith: "t0", server: StormServer(valid: "t0"))
    return { await stormBurst(n, through: gate, timeout: timeout) }
}

/// A tracer that records nothing, as a user's tracer with sampling off would: spans that drop
/// what they are given. Unlike `NoOpTracer`, Conductor cannot recognise it and switch tracing off.
private struct OpaqueNoOpTracer: Tracer {
    typealias Span = NoOpTracer.NoOpSpan
    func startSpan<Instant: TracerInstant>(
        _ operationName: String, context: @autoclosure () -> ServiceContext, ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant, function: String, file fileID: String, line: UInt
    ) -> NoOpTracer.NoOpSpan {
        NoOpTracer.NoOpSpan(context: context())
    }
    func forceFlush() {}
    func extract<Carrier, Extract: Extractor>(
        _ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract
    ) where Extract.Carrier == Carrier {}
    func inject<Carrier, Inject: Injector>(
        _ context: ServiceContext, into carrier: inout Carrier, using injector: Inject
    ) where Inject.Carrier == Carrier {}
}

/// `instructions --list` prints `NAME subject|baseline|manual` per contender; `instructions NAME N`
/// runs NAME once at size N between the callgrind markers. Never returns.
func countInstructions(_ arguments: [String]) -> Never {
    let usage = """
        usage: conductor-bench instructions --list
               conductor-bench instructions NAME N    (run NAME once at size N, for callgrind)
        """
    func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("conductor-bench: \(message)\n\(usage)\n".utf8))
        exit(2)
    }
    if arguments == ["--list"] {
        for contender in countedContenders {
            let role = contender.isManual ? "manual" : contender.isSubject ? "subject" : "baseline"
            if contender.unitsOf == 1 {
                print(contender.name, role)
            } else {
                print(contender.name, role, contender.unitsOf)
            }
        }
        exit(0)
    }
    guard arguments.count == 2, let n = Int(arguments[1]), n > 0, n.isMultiple(of: 2) else {
        fail("instructions needs a name and an even size")
    }
    guard let contender = countedContenders.first(where: { $0.name == arguments[0] }) else {
        fail("no contender named \(arguments[0]); see instructions --list")
    }
    guard n >= contender.unitsOf else { fail("\(contender.name) needs a size of at least \(contender.unitsOf)") }
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        let work = await contender.prepare(n / contender.unitsOf)
        conductor_bench_counting_starts()
        await work()
        conductor_bench_counting_stops()
        if let cleanup = countedCleanup.withLock({ $0 }) { cleanup() }
        if let gate = countedStormGate.withLock({ $0 }) {
            let events = gate.recordedEvents
            // Parked: behind the refresh, after a 401 (`redirect`) or before sending (`parked`).
            let redirected = events.count { if case .redirect = $0 { true } else { false } }
            let parked = redirected + events.count { if case .parked = $0 { true } else { false } }
            let queued = events.count { if case .queued = $0 { true } else { false } }
            let resent = events.count { if case .running(_, let attempt, _) = $0 { attempt > 1 } else { false } }
            FileHandle.standardError.write(
                Data(
                    "storm: \(parked) parked (\(redirected) after a 401), \(queued) queued, \(resent) re-sent\n".utf8))
        }
        done.signal()
    }
    done.wait()
    exit(0)
}
