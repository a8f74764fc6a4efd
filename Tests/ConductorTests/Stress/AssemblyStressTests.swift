import Conductor
import Testing

/// Concurrent first resolves of services whose factories sometimes fail, across executors:
/// a singleton is created at most once per success, failures reach every waiter, and a
/// later resolve tries again.
@Suite struct AssemblyStressTests {
    final class Service: Sendable {}
    final class Dependent: Sendable {
        let service: Service
        init(service: Service) { self.service = service }
    }

    @Test func concurrentResolvesShareOneCreation() async throws {
        let background = QueueExecutor(label: "stress.background")
        for seed in StressConfiguration.seeds(default: 40, base: 0xA55E_0001) {
            var generator = SeededGenerator(seed: seed)
            let failFirst = Bool.random(using: &generator)
            let created = Recorder<Int>()
            let assembly = Assembly()
            assembly.register(Service.self, on: background) { _ in
                created.append(1)
                if failFirst, created.all.count == 1 { throw AssemblyStressFault() }
                return Service()
            }
            assembly.register(Dependent.self) { resolver in Dependent(service: try await resolver.resolve(Service.self))
            }
            let callers = Int.random(in: 2...64, using: &generator)
            let results = await withTaskGroup(of: ObjectIdentifier?.self) { group in
                for _ in 0..<callers {
                    group.addTask {
                        (try? await assembly.resolve(Dependent.self)).map { ObjectIdentifier($0.service) }
                    }
                }
                var results: [ObjectIdentifier?] = []
                for await result in group { results.append(result) }
                return results
            }
            let succeeded = Set(results.compactMap { $0 })
            #expect(succeeded.count <= 1, "seed \(seed): more than one instance")
            let final = try await assembly.resolve(Dependent.self)
            #expect(succeeded.isEmpty || succeeded == [ObjectIdentifier(final.service)], "seed \(seed)")
            #expect(created.all.count <= (failFirst ? 2 : 1), "seed \(seed): factory ran \(created.all.count) times")
        }
    }
}

private struct AssemblyStressFault: Error {}
