import Conductor
import Foundation

// MARK: - scaling

// How the engine uses a second core: the 10,000-node graph of graph.dag with no-op bodies and
// with bodies that keep a core busy for 1 µs and 10 µs (`spin`, calibrated), timed on two
// cores and pinned to one in the same invocation. The inline ready-count scheduler runs the
// same bodies, and two plain threads running the 10 µs body in a loop give the ceiling: what
// two cores do with that work and no scheduler at all.

/// The graph.dag graph at size `n` with a body of `microseconds` of spinning (0: no-op), and
/// the inline ready-count scheduler with the same body.
func scalingScenario(_ n: Int, microseconds: Int) -> Scenario {
    let body = NodeBody(iterations: microseconds * spinIterationsPerMicrosecond())
    let dag = LayeredDAG(count: n, width: 100)
    let graph = dag.graph(body: body.operation)
    let table = dag.table()
    let work = body.work
    return Scenario(
        name: microseconds == 0 ? "scaling.dag no-op" : "scaling.dag \(microseconds) µs", n: n, unit: "ns/task",
        subject: Contender(name: "TaskGraph.run") {
            await nanosecondsPerOperation(n) { _ = try! await graph.run() }
        },
        baselines: [
            Contender(name: "ready-count, inline") {
                await nanosecondsPerOperation(n) { await readyCountScheduler(table, work) }
            }
        ],
        isScaling: true
    )
}

/// The ceiling: two threads, each running the `microseconds` body n/2 times in a plain loop.
func scalingCeilingScenario(_ n: Int, microseconds: Int) -> Scenario {
    let iterations = microseconds * spinIterationsPerMicrosecond()
    return Scenario(
        name: "scaling.ceiling \(microseconds) µs", n: n, unit: "ns/task",
        subject: Contender(name: "2 threads, plain loop") {
            await nanosecondsPerOperation(n) { twoThreadLoop(n, iterations: iterations) }
        },
        baselines: [],
        isScaling: true
    )
}

/// Runs `spin(iterations)` n times, half on each of two new threads, and waits for both.
func twoThreadLoop(_ n: Int, iterations: Int) {
    let done = DispatchGroup()
    for _ in 0..<2 {
        done.enter()
        Thread {
            for _ in 0..<n / 2 { spin(iterations) }
            done.leave()
        }.start()
    }
    done.wait()
}
