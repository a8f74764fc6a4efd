import Conductor
import CoreMetrics
import Dispatch
import Foundation
import InMemoryTracing
import Synchronization
import Tracing

// Every graph contender is timed from "start the work" to "all of it has ended". A
// `TaskGraph` is a reusable value built once (like the baselines' code, which is compiled),
// so its construction is not timed; `run()` is, and it includes validation.

// MARK: - graph.independent

/// `n` independent no-op tasks.
func independentGraph(_ n: Int) -> TaskGraph {
    var graph = TaskGraph()
    for index in 0..<n { graph.add("t\(index)") { _ in } }
    return graph
}

/// An open run holding `held` ended no-op tasks, and the work of adding `n` more one at a time
/// (ids made beforehand, as graph.independent's are), then closing the run and awaiting its end.
func addToOpenRun(_ n: Int, holding held: Int) async -> @Sendable () async -> Void {
    var graph = TaskGraph()
    for index in 0..<held { graph.add("held\(index)") { _ in } }
    graph.addMilestone("held", after: (0..<held).map { "held\($0)" })
    let run = try! graph.start(staysOpen: true)
    try! await run.reached("held")
    let ids = (0..<n).map { "t\($0)" }
    return {
        for id in ids { try! run.add(id) { _ in } }
        run.close()
        _ = try! await run.report()
    }
}

/// ``independentGraph(_:)`` with `options` on every task (graph.timeout's subject).
func independentGraph(_ n: Int, options: TaskOptions) -> TaskGraph {
    var graph = TaskGraph()
    for index in 0..<n { graph.add("t\(index)", options: options) { _ in } }
    return graph
}

func withTaskGroupIndependent(_ n: Int) async {
    await withTaskGroup(of: Void.self) { group in
        for _ in 0..<n { group.addTask {} }
    }
}

func addImmediateTaskIndependent(_ n: Int) async {
    await withTaskGroup(of: Void.self) { group in
        for _ in 0..<n { group.addImmediateTask {} }
    }
}

func independentScenario(_ n: Int) -> Scenario {
    let subject = independentGraph(n)
    var baselines = [
        Contender(name: "withTaskGroup") {
            await nanosecondsPerOperation(n) { await withTaskGroupIndependent(n) }
        },
        Contender(name: "addImmediateTask") {
            await nanosecondsPerOperation(n) { await addImmediateTaskIndependent(n) }
        },
    ]
    if n <= 10_000 {
        baselines.append(
            Contender(name: "OperationQueue") {
                await nanosecondsPerOperation(n) { operationQueueIndependent(n) }
            })
    }
    // Tracing's cost: the subject runs with the process's no-op tracer and factory (nothing
    // is bootstrapped), so its ratio to `Telemetry.disabled` is what an app that never
    // bootstraps tracing pays; the in-memory tracer shows what a recording one costs.
    baselines.append(
        Contender(name: "TaskGraph.run, Telemetry.disabled") {
            await nanosecondsPerOperation(n) { _ = try! await subject.run(telemetry: .disabled) }
        })
    if n <= 10_000 {
        baselines.append(
            Contender(name: "TaskGraph.run, InMemoryTracer") {
                let tracer = InMemoryTracer()
                return await nanosecondsPerOperation(n) {
                    _ = try! await subject.run(telemetry: Telemetry(tracer: tracer))
                }
            })
    }
    return Scenario(
        name: "graph.independent", n: n, unit: "ns/task",
        subject: Contender(name: "TaskGraph.run") {
            await nanosecondsPerOperation(n) { _ = try! await subject.run() }
        },
        baselines: baselines
    )
}

// MARK: - graph.dag

/// A layered DAG: `width` nodes per layer, node `i` of a layer depending on nodes `i` and
/// `i + 1` (wrapping) of the layer before.
struct LayeredDAG: Sendable {
    let count: Int
    let width: Int

    func dependencies(of node: Int) -> [Int] {
        guard node >= width else { return [] }
        let layerStart = (node / width - 1) * width
        let column = node % width
        return [layerStart + column, layerStart + (column + 1) % width]
    }

    /// Successor lists and dependency counts, as a hand-written scheduler keeps them.
    func table() -> ReadyCountTable {
        var successors = Array(repeating: [Int32](), count: count)
        var dependencyCounts = Array(repeating: Int32(0), count: count)
        for node in 0..<count {
            for dependency in dependencies(of: node) {
                successors[dependency].append(Int32(node))
                dependencyCounts[node] += 1
            }
        }
        return ReadyCountTable(successors: successors, dependencyCounts: dependencyCounts)
    }

    /// The graph with `body` as every node's operation, stored and called as written.
    func graph(body: @escaping @Sendable (TaskContext) async throws -> Void) -> TaskGraph {
        var graph = TaskGraph()
        for node in 0..<count {
            graph.add("n\(node)", dependsOn: .on(dependencies(of: node).map { "n\($0)" }), body)
        }
        return graph
    }

    /// graph.dag's graph before issue 20, kept for one release as `graph.dag (old body)`: each
    /// node's operation awaits another closure, two async frames per node where the inline
    /// baseline runs one.
    func graphWithOldBody() -> TaskGraph {
        let work: @Sendable () async -> Void = {}
        var graph = TaskGraph()
        for node in 0..<count {
            graph.add("n\(node)", dependsOn: .on(dependencies(of: node).map { "n\($0)" })) { _ in await work() }
        }
        return graph
    }
}

// MARK: - Node bodies

/// What one node of a graph.dag contender runs: the same async closure for every contender —
/// the graph's operation, the baselines' `work` — so that their ratio compares schedulers,
/// not body shapes. Each is one async call per node: `{ _ in }` or `{ _ in spin(k) }` in the
/// graph, `{}` or `{ spin(k) }` in the baselines.
struct NodeBody: Sendable {
    /// `spin` iterations per node; 0 for a no-op body.
    let iterations: Int

    static let noOp = NodeBody(iterations: 0)

    /// The graph's operation.
    var operation: @Sendable (TaskContext) async throws -> Void { opaqueOperation(spinning: iterations) }
    /// The baselines' body.
    var work: @Sendable () async -> Void { opaqueWork(spinning: iterations) }
}

// Made out of line so that the optimiser cannot specialise a baseline for a known closure and
// drop its call: every contender calls its body through a closure value, as the graph does.
@inline(never)
private func opaqueOperation(spinning iterations: Int) -> @Sendable (TaskContext) async throws -> Void {
    if iterations == 0 { return { _ in } }
    return { _ in spin(iterations) }
}

@inline(never)
private func opaqueWork(spinning iterations: Int) -> @Sendable () async -> Void {
    if iterations == 0 { return {} }
    return { spin(iterations) }
}

struct ReadyCountTable: Sendable {
    let successors: [[Int32]]
    let dependencyCounts: [Int32]
}

/// Dependency counters that workers on several threads decrement without a lock.
///
/// `@unchecked Sendable`: the buffer is written only at init, then touched only through its
/// atomics, and freed in deinit when no worker can hold a reference any more.
final class AtomicCounters: @unchecked Sendable {
    private let counters: UnsafeMutablePointer<Atomic<Int32>>
    let count: Int

    init(_ values: [Int32]) {
        count = values.count
        counters = .allocate(capacity: values.count)
        for (index, value) in values.enumerated() { (counters + index).initialize(to: Atomic(value)) }
    }

    deinit {
        counters.deinitialize(count: count)
        counters.deallocate()
    }

    /// Decrements counter `index`; true when this call took it to zero.
    @inline(__always)
    func release(_ index: Int32) -> Bool {
        counters[Int(index)].subtract(1, ordering: .acquiringAndReleasing).newValue == 0
    }
}

/// The best hand-written scheduler: atomic ready counts; a worker that finishes a node runs
/// the first successor it made ready itself (no task, no hop) and hands any others back to
/// the group's owner to spawn.
func readyCountScheduler(_ table: ReadyCountTable, _ work: @escaping @Sendable () async -> Void) async {
    let counters = AtomicCounters(table.dependencyCounts)
    let roots = table.dependencyCounts.indices.filter { table.dependencyCounts[$0] == 0 }.map { Int32($0) }
    @Sendable func worker(_ first: Int32) async -> [Int32] {
        var node = first
        var spawn: [Int32] = []
        while true {
            await work()
            var next: Int32 = -1
            for successor in table.successors[Int(node)] where counters.release(successor) {
                if next < 0 { next = successor } else { spawn.append(successor) }
            }
            guard next >= 0 else { return spawn }
            node = next
        }
    }
    await withTaskGroup(of: [Int32].self) { group in
        for root in roots { group.addTask { await worker(root) } }
        while let spawned = await group.next() {
            for node in spawned { group.addTask { await worker(node) } }
        }
    }
}

/// The same scheduler spawning a child task for every node made ready. `work` is each node's
/// body; nil runs none, as graph.dag's baselines did before issue 20 (the old-body rows).
func readyCountSchedulerSpawning(_ table: ReadyCountTable, _ work: (@Sendable () async -> Void)?) async {
    let counters = AtomicCounters(table.dependencyCounts)
    let roots = table.dependencyCounts.indices.filter { table.dependencyCounts[$0] == 0 }.map { Int32($0) }
    @Sendable func node(_ node: Int32) async -> [Int32] {
        if let work { await work() }
        return table.successors[Int(node)].filter { counters.release($0) }
    }
    await withTaskGroup(of: [Int32].self) { group in
        for root in roots { group.addTask { await node(root) } }
        while let ready = await group.next() {
            for ready in ready { group.addTask { await node(ready) } }
        }
    }
}

/// What the obvious Swift code does: one `Task` per node, awaiting its predecessors' values,
/// then running `work` (none when nil, as before issue 20).
func taskPerNode(_ dag: LayeredDAG, _ work: (@Sendable () async -> Void)?) async {
    var tasks: [Task<Void, Never>] = []
    tasks.reserveCapacity(dag.count)
    for node in 0..<dag.count {
        let predecessors = dag.dependencies(of: node).map { tasks[$0] }
        tasks.append(
            Task {
                for predecessor in predecessors { await predecessor.value }
                if let work { await work() }
            })
    }
    for task in tasks { await task.value }
}

/// The ready-count loop on the calling task alone, running `work` for each node (none when
/// nil, as before issue 20).
func singleThreadedReadyCount(_ table: ReadyCountTable, _ work: (@Sendable () async -> Void)?) async -> Int {
    var remaining = table.dependencyCounts
    var ready = remaining.indices.filter { remaining[$0] == 0 }.map { Int32($0) }
    var done = 0
    while let node = ready.popLast() {
        if let work { await work() }
        done += 1
        for successor in table.successors[Int(node)] {
            remaining[Int(successor)] -= 1
            if remaining[Int(successor)] == 0 { ready.append(successor) }
        }
    }
    return done
}

func operationQueueIndependent(_ n: Int) {
    let queue = OperationQueue()
    queue.addOperations((0..<n).map { _ in BlockOperation {} }, waitUntilFinished: true)
}

func operationQueueDAG(_ dag: LayeredDAG) {
    let queue = OperationQueue()
    var operations: [BlockOperation] = []
    operations.reserveCapacity(dag.count)
    for node in 0..<dag.count {
        let operation = BlockOperation {}
        for dependency in dag.dependencies(of: node) { operation.addDependency(operations[dependency]) }
        operations.append(operation)
    }
    queue.addOperations(operations, waitUntilFinished: true)
}

/// graph.dag at size `n`. Every contender runs `body` once per node (one async call), except
/// OperationQueue, whose operations are synchronous blocks with nothing in them. With
/// `oldBody`, the rows as they were before issue 20, kept for one release as
/// `graph.dag (old body)`: the graph's operation awaits a second closure, the inline
/// ready-count scheduler calls an empty one, the other baselines run no body at all.
func dagScenario(_ n: Int, body: NodeBody = .noOp, oldBody: Bool = false, operationQueueOnly: Bool = false)
    -> Scenario
{
    let dag = LayeredDAG(count: n, width: 100)
    let graph = oldBody ? dag.graphWithOldBody() : dag.graph(body: body.operation)
    let table = dag.table()
    let work: (@Sendable () async -> Void)? = oldBody ? nil : body.work
    let inlineWork = work ?? NodeBody.noOp.work
    let name = oldBody ? "graph.dag (old body)" : "graph.dag"
    let subject = Contender(name: "TaskGraph.run") {
        await nanosecondsPerOperation(n) { _ = try! await graph.run() }
    }
    if operationQueueOnly {
        return Scenario(
            name: name, n: n, unit: "ns/node", subject: subject,
            baselines: [
                Contender(name: "OperationQueue+dependencies") {
                    await nanosecondsPerOperation(n) { operationQueueDAG(dag) }
                }
            ])
    }
    return Scenario(
        name: name, n: n, unit: "ns/node", subject: subject,
        baselines: [
            Contender(name: "Task per node") { await nanosecondsPerOperation(n) { await taskPerNode(dag, work) } },
            Contender(name: "ready-count, spawning") {
                await nanosecondsPerOperation(n) { await readyCountSchedulerSpawning(table, work) }
            },
            Contender(name: "ready-count, inline") {
                await nanosecondsPerOperation(n) { await readyCountScheduler(table, inlineWork) }
            },
            Contender(name: "ready-count, 1 thread") {
                await nanosecondsPerOperation(n) {
                    let done = await singleThreadedReadyCount(table, work)
                    precondition(done == n)
                }
            },
        ])
}

// MARK: - graph.stages

func stagesScenario(stages: Int, width: Int) -> Scenario {
    let schedule = Schedule {
        for stage in 0..<stages {
            Stage("s\(stage)") {
                for task in 0..<width { Step("s\(stage).\(task)") { _ in } }
            }
        }
    }
    let n = stages * width
    return Scenario(
        name: "graph.stages \(stages)×\(width)", n: n, unit: "ns/task",
        subject: Contender(name: "Schedule.run") {
            await nanosecondsPerOperation(n) { _ = try! await schedule.run() }
        },
        baselines: [
            Contender(name: "TaskGroup per stage") {
                await nanosecondsPerOperation(n) {
                    for _ in 0..<stages {
                        await withTaskGroup(of: Void.self) { group in
                            for _ in 0..<width { group.addTask {} }
                        }
                    }
                }
            },
            Contender(name: "DispatchGroup per stage") {
                await nanosecondsPerOperation(n) {
                    for _ in 0..<stages {
                        let group = DispatchGroup()
                        for _ in 0..<width { DispatchQueue.global().async(group: group) {} }
                        group.wait()
                    }
                }
            },
        ])
}

// MARK: - graph.parallel

/// The guard against buying speed with lost parallelism: every node waits 1 ms on the clock.
func parallelScenario(layers: Int, width: Int) -> Scenario {
    let dag = LayeredDAG(count: layers * width, width: width)
    let graph = dag.graph(body: { _ in try? await Task.sleep(for: .milliseconds(1)) })
    return Scenario(
        name: "graph.parallel", n: dag.count, unit: "ms (makespan)",
        subject: Contender(name: "TaskGraph.run") {
            await nanosecondsPerOperation(1) { _ = try! await graph.run() } / 1e6
        },
        baselines: [
            Contender(name: "TaskGroup per layer") {
                await nanosecondsPerOperation(1) {
                    for _ in 0..<layers {
                        await withTaskGroup(of: Void.self) { group in
                            for _ in 0..<width { group.addTask { try? await Task.sleep(for: .milliseconds(1)) } }
                        }
                    }
                } / 1e6
            }
        ],
        note: "\(layers) layers × \(width), each node sleeps 1 ms; the ideal is \(layers) ms"
    )
}

// MARK: - memory.pending

/// Releases everything waiting on it, once.
final class Blocker: Sendable {
    private let state = Mutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func wait() async {
        await withCheckedContinuation { continuation in
            let resumeNow = state.withLock { state in
                if state.open { return true }
                state.waiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    var waiterCount: Int { state.withLock { $0.waiters.count } }

    func open() {
        let waiters = state.withLock { state in
            state.open = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

/// Waits until `condition` holds, polling: only the memory scenario uses it, outside any timing.
func until(_ condition: () -> Bool) async {
    while !condition() { try? await Task.sleep(for: .milliseconds(1)) }
}

/// Bytes in use once the previous contender's memory has been given back: its tasks and
/// run storage are freed on other threads shortly after it returns.
func settledAllocatedBytes() async -> Int {
    try? await Task.sleep(for: .milliseconds(100))
    return allocatedBytes()
}

func memoryScenario(_ n: Int) -> Scenario {
    Scenario(
        name: "memory.pending", n: n, unit: "B/task",
        subject: Contender(name: "TaskGraph (pending)") { await pendingTaskBytes(n) },
        baselines: [
            Contender(name: "TaskGroup children (pending)") {
                let before = await settledAllocatedBytes()
                let blocker = Blocker()
                var bytes = 0.0
                await withTaskGroup(of: Void.self) { group in
                    for _ in 0..<n { group.addTask { await blocker.wait() } }
                    await until { blocker.waiterCount == n }
                    bytes = Double(allocatedBytes() - before) / Double(n)
                    blocker.open()
                }
                return bytes
            }
        ],
        note:
            "bytes in use by malloc (all arenas, glibc malloc_info) from before building to all pending, per pending task"
    )
}

// MARK: - graph.limit

/// A hand-written async semaphore: a Mutex over the free places and a FIFO of continuations
/// (an array and the position of its head). A waiter handed a place is resumed outside the lock.
final class AsyncSemaphore: Sendable {
    private let state: Mutex<(free: Int, waiters: [CheckedContinuation<Void, Never>], head: Int)>

    init(_ capacity: Int) { state = Mutex((capacity, [], 0)) }

    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = state.withLock { state -> Bool in
                if state.free > 0, state.head == state.waiters.count {
                    state.free -= 1
                    return true
                }
                state.waiters.append(continuation)
                return false
            }
            if granted { continuation.resume() }
        }
    }

    func signal() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard state.head < state.waiters.count else {
                state.free += 1
                return nil
            }
            let next = state.waiters[state.head]
            state.head += 1
            if state.head == state.waiters.count {
                state.waiters.removeAll(keepingCapacity: true)
                state.head = 0
            }
            return next
        }
        next?.resume()
    }
}

/// `n` tasks naming one shared limit; each body yields once.
func limitGraph(_ n: Int, limit: TaskLimit) -> TaskGraph {
    var graph = TaskGraph()
    for index in 0..<n {
        graph.add("t\(index)", options: TaskOptions(limits: [limit])) { _ in await Task.yield() }
    }
    return graph
}

/// The baseline: a task group of `n` children, each holding a place of `semaphore` around a
/// body that yields once.
func semaphoreTasks(_ n: Int, semaphore: AsyncSemaphore) async {
    await withTaskGroup(of: Void.self) { group in
        for _ in 0..<n {
            group.addTask {
                await semaphore.wait()
                await Task.yield()
                semaphore.signal()
            }
        }
    }
}

func limitScenario(_ n: Int, capacity: Int) -> Scenario {
    let limit = TaskLimit(capacity, name: "bench")
    let graph = limitGraph(n, limit: limit)
    let third = limitGraph(n / 3, limit: limit)
    return Scenario(
        name: "graph.limit", n: n, unit: "ns/task",
        subject: Contender(name: "TaskGraph.run, TaskLimit(\(capacity))") {
            await nanosecondsPerOperation(n) { _ = try! await graph.run() }
        },
        baselines: [
            Contender(name: "withTaskGroup + async semaphore") {
                await nanosecondsPerOperation(n) { await semaphoreTasks(n, semaphore: AsyncSemaphore(capacity)) }
            },
            Contender(name: "3 runs of n/3 sharing the TaskLimit") {
                await nanosecondsPerOperation(n) {
                    async let a = third.run()
                    async let b = third.run()
                    async let c = third.run()
                    _ = try! await [a, b, c]
                }
            },
            Contender(name: "3 task groups of n/3 sharing one semaphore") {
                await nanosecondsPerOperation(n) {
                    let semaphore = AsyncSemaphore(capacity)
                    async let a: Void = semaphoreTasks(n / 3, semaphore: semaphore)
                    async let b: Void = semaphoreTasks(n / 3, semaphore: semaphore)
                    async let c: Void = semaphoreTasks(n / 3, semaphore: semaphore)
                    _ = await (a, b, c)
                }
            },
        ],
        note: "each body yields once; the limit is shared, capacity \(capacity); the 3-run rows time n tasks too"
    )
}
