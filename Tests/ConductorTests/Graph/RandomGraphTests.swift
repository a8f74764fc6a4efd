import Testing

@testable import ConductorAssembly
@testable import ConductorCore
@testable import ConductorGate
@testable import ConductorGraph
@testable import ConductorHarmonizer
@testable import ConductorLaunch
@testable import ConductorReports

/// Property tests over random graphs. Each failure names its seed, which
/// `CONDUCTOR_REPLAY=<seed> swift test --filter RandomGraphTests` replays.
@Suite struct RandomGraphTests {
    private struct Fault: Error {}

    /// A random DAG: each node depends on up to three earlier nodes.
    static func randomDAG(
        _ generator: inout SeededGenerator, nodes: Int
    ) -> [(id: String, dependencies: [String])] {
        (0..<nodes).map { index in
            let count = index == 0 ? 0 : Int.random(in: 0...min(3, index), using: &generator)
            let dependencies = Set((0..<count).map { _ in Int.random(in: 0..<index, using: &generator) })
            return ("n\(index)", dependencies.sorted().map { "n\($0)" })
        }
    }

    @Test(arguments: StressConfiguration.seeds(default: 300, base: 0x2A9D_0001))
    func everyTaskRunsOnceAndOnlyAfterItsDependencies(seed: UInt64) async throws {
        var generator = SeededGenerator(seed: seed)
        let shape = Self.randomDAG(&generator, nodes: Int.random(in: 1...40, using: &generator))
        let limit: Int? = Bool.random(using: &generator) ? Int.random(in: 1...4, using: &generator) : nil
        let log = Recorder<(String, Bool)>()
        var graph = TaskGraph()
        for node in shape {
            let yields = Bool.random(using: &generator)
            graph.add(node.id, dependsOn: .on(node.dependencies)) { _ in
                log.append((node.id, true))
                if yields { await Task.yield() }
                log.append((node.id, false))
            }
        }
        let report = try await graph.run(concurrencyLimit: limit)
        #expect(report.isSuccess, "seed \(seed)")
        let entries = log.all
        #expect(entries.count == shape.count * 2, "seed \(seed)")
        var endedAt: [String: Int] = [:]
        var startedAt: [String: Int] = [:]
        for (position, (id, isStart)) in entries.enumerated() {
            if isStart {
                #expect(startedAt.updateValue(position, forKey: id) == nil, "seed \(seed): \(id) ran twice")
            } else {
                endedAt[id] = position
            }
        }
        for node in shape {
            for dependency in node.dependencies {
                #expect(endedAt[dependency]! < startedAt[node.id]!, "seed \(seed): \(node.id) before \(dependency)")
            }
        }
    }

    /// Random faults: optional failures skip exactly the tasks that need them; every task
    /// still ends exactly once with one outcome.
    @Test(arguments: StressConfiguration.seeds(default: 200, base: 0x2A9D_0002))
    func randomFaultsEndEveryTaskOnce(seed: UInt64) async throws {
        var generator = SeededGenerator(seed: seed)
        let shape = Self.randomDAG(&generator, nodes: Int.random(in: 1...30, using: &generator))
        var failing: Set<String> = []
        var graph = TaskGraph()
        for node in shape {
            let fails = Int.random(in: 0..<5, using: &generator) == 0
            if fails { failing.insert(node.id) }
            graph.add(node.id, dependsOn: .on(node.dependencies), options: TaskOptions(failure: .optional)) { _ in
                if fails { throw Fault() }
            }
        }
        let run = try graph.start()
        let report = try await run.report()
        var ended: [String: Int] = [:]
        for await event in run.events {
            switch event {
            case .taskSucceeded(let id, _), .taskFailed(let id, _, _), .taskSkipped(let id, _, _),
                .taskCancelled(let id, _), .taskTimedOut(let id, _):
                ended[id, default: 0] += 1
            default: break
            }
        }
        #expect(ended.count == shape.count && ended.values.allSatisfy { $0 == 1 }, "seed \(seed)")
        // Expected outcome: failed if it throws, skipped if any dependency did not succeed.
        var succeeded: Set<String> = []
        for node in shape {
            let record = try #require(report[node.id])
            let blocked = node.dependencies.contains { !succeeded.contains($0) }
            if blocked {
                #expect("\(record.outcome)".hasPrefix("skipped"), "seed \(seed): \(node.id)")
            } else if failing.contains(node.id) {
                #expect("\(record.outcome)".hasPrefix("failed"), "seed \(seed): \(node.id)")
            } else {
                #expect(record.outcome.isSuccess, "seed \(seed): \(node.id)")
                succeeded.insert(node.id)
            }
        }
    }

    /// A random back edge added to a random DAG is always rejected as a cycle whose path
    /// closes on itself and follows real dependencies.
    @Test(arguments: StressConfiguration.seeds(default: 200, base: 0x2A9D_0003))
    func cyclesAreAlwaysRejected(seed: UInt64) throws {
        var generator = SeededGenerator(seed: seed)
        var shape = Self.randomDAG(&generator, nodes: Int.random(in: 2...40, using: &generator))
        // Make a path from a low node to a high one, then close it.
        let high = Int.random(in: 1..<shape.count, using: &generator)
        let low = Int.random(in: 0..<high, using: &generator)
        for index in (low + 1)...high where !shape[index].dependencies.contains("n\(index - 1)") {
            shape[index].dependencies.append("n\(index - 1)")
        }
        shape[low].dependencies.append("n\(high)")
        var graph = TaskGraph()
        for node in shape { graph.add(node.id, dependsOn: .on(node.dependencies)) { _ in } }
        let error = try #require(throws: GraphError.self, "seed \(seed)") { try graph.validate() }
        #expect(error.code == .cycle, "seed \(seed)")
        let path = error.message.dropFirst("dependencies form a loop: ".count).split(separator: " → ").map(String.init)
        #expect(path.first == path.last, "seed \(seed)")
        let dependencies = Dictionary(uniqueKeysWithValues: shape.map { ($0.id, Set($0.dependencies)) })
        for (from, to) in zip(path, path.dropFirst()) {
            #expect(dependencies[from]?.contains(to) == true, "seed \(seed): \(from) → \(to)")
        }
    }
}
