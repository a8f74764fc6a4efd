import Conductor
import Dispatch
import Foundation

// `conductor-bench bytes NAME N` prints the bytes a scenario's subject holds per unit at size N,
// as a whole number, for `scripts/instructions --check` (budget lines `bytes NAME MAX`). Like the
// instructions mode, its `main` never awaits: the main thread blocks on a semaphore while a
// detached task measures.

/// The byte counts `conductor-bench bytes` measures, by name.
let countedByteScenarios: [(name: String, measure: @Sendable (_ n: Int) async -> Double)] = [
    ("memory.pending", { n in await pendingTaskBytes(n) })
]

/// The heap bytes a run holds per task while `n` tasks wait for one blocker: the same graph as
/// the timed `memory.pending` scenario's subject, measured once.
func pendingTaskBytes(_ n: Int) async -> Double {
    let before = await settledAllocatedBytes()
    let blocker = Blocker()
    var graph = TaskGraph()
    graph.add("blocker") { _ in await blocker.wait() }
    for index in 0..<n { graph.add("t\(index)", dependsOn: ["blocker"]) { _ in } }
    let run = try! graph.start()
    await until { blocker.waiterCount == 1 }
    let bytes = Double(allocatedBytes() - before) / Double(n)
    // For a heap profiler (`valgrind --tool=massif`): its last snapshot is then this state.
    if ProcessInfo.processInfo.environment["CONDUCTOR_BENCH_EXIT_PENDING"] != nil { exit(0) }
    blocker.open()
    _ = try? await run.report()
    return bytes
}

/// `bytes --list` prints the names; `bytes NAME N` prints NAME's bytes per unit at size N,
/// rounded to a whole number. Never returns.
func countBytes(_ arguments: [String]) -> Never {
    let usage = """
        usage: conductor-bench bytes --list
               conductor-bench bytes NAME N    (bytes per unit of NAME at size N)
        """
    func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("conductor-bench: \(message)\n\(usage)\n".utf8))
        exit(2)
    }
    if arguments == ["--list"] {
        for scenario in countedByteScenarios { print(scenario.name) }
        exit(0)
    }
    guard arguments.count == 2, let n = Int(arguments[1]), n > 0 else { fail("bytes needs a name and a size") }
    guard let scenario = countedByteScenarios.first(where: { $0.name == arguments[0] }) else {
        fail("no byte count named \(arguments[0]); see bytes --list")
    }
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        let bytes = await scenario.measure(n)
        print(Int(bytes.rounded()))
        done.signal()
    }
    done.wait()
    exit(0)
}
