import Conductor
import Dispatch
import Synchronization
import Testing

// MARK: - The seed's chain: A on main needs B on a background queue, which needs C on main

private final class ServiceC: Sendable {
    let createdOnMain: Bool
    init(createdOnMain: Bool) { self.createdOnMain = createdOnMain }
}

private final class ServiceB: Sendable {
    let c: ServiceC
    let createdOnBackground: Bool
    init(c: ServiceC, createdOnBackground: Bool) {
        self.c = c
        self.createdOnBackground = createdOnBackground
    }
}

private final class ServiceA: Sendable {
    let b: ServiceB
    let createdOnMain: Bool
    init(b: ServiceB, createdOnMain: Bool) {
        self.b = b
        self.createdOnMain = createdOnMain
    }
}

/// Each factory checks its executor after its `await`, so the check also proves the factory
/// resumed where it belongs.
private func seedChain() -> Assembly {
    let background = QueueExecutor(label: "background")
    let assembly = Assembly()
    assembly.register(ServiceA.self, on: .main) { resolver in
        let b = try await resolver.resolve(ServiceB.self)
        return ServiceA(b: b, createdOnMain: QueueExecutor.main.isCurrent)
    }
    assembly.register(ServiceB.self, on: background) { resolver in
        let c = try await resolver.resolve(ServiceC.self)
        return ServiceB(c: c, createdOnBackground: background.isCurrent)
    }
    assembly.register(ServiceC.self, on: .main) { _ in
        ServiceC(createdOnMain: QueueExecutor.main.isCurrent)
    }
    return assembly
}

private func expectCreatedWhereRegistered(_ a: ServiceA) {
    #expect(a.createdOnMain)
    #expect(a.b.createdOnBackground)
    #expect(a.b.c.createdOnMain)
}

// MARK: - Other services

private final class Widget: Sendable {}

private struct Boom: Error, Equatable {}

private final class CycleA: Sendable {}
private final class CycleB: Sendable {}

private struct Logger: Sendable {
    let tag: String
}

private final class Greeter: Sendable {
    let logger: Logger
    init(logger: Logger) { self.logger = logger }
}

/// Shared by the override tests, which run in parallel.
private let sharedAssembly: Assembly = {
    let assembly = Assembly()
    assembly.register(Logger.self) { _ in Logger(tag: "real") }
    assembly.register(Greeter.self) { resolver in Greeter(logger: try await resolver.resolve(Logger.self)) }
    return assembly
}()

@Suite struct AssemblyTests {
    // MARK: - Crossing executors

    @Test func seedChainResolvesAsynchronouslyWithoutDeadlock() async throws {
        let assembly = seedChain()
        let a = try await assembly.resolve(ServiceA.self)
        expectCreatedWhereRegistered(a)
        #expect(try await assembly.resolve(ServiceA.self) === a)
        #expect(assembly.resolveIfCreated(ServiceB.self) === a.b)
    }

    /// The seed's deadlock: main blocks for A, whose creation needs main again for C. The
    /// synchronous resolve keeps running the main executor's jobs while it waits.
    @MainActor @Test func seedChainResolvesSynchronouslyOnMainWithoutDeadlock() throws {
        for _ in 0..<20 {
            let assembly = seedChain()
            let a = try assembly.resolveOnMain(ServiceA.self)
            expectCreatedWhereRegistered(a)
            #expect(try assembly.resolveOnMain(ServiceA.self) === a)
            #expect(try assembly.resolveOnMain(ServiceC.self) === a.b.c)
        }
    }

    /// Main is blocked in a synchronous resolve while another task's creation of the same
    /// service is already in flight and needs main: the wait runs that work too.
    @MainActor @Test func synchronousResolveJoinsACreationAlreadyInFlight() async throws {
        let assembly = seedChain()
        async let fromBackground = Task.detached { try await assembly.resolve(ServiceA.self) }.value
        let a = try assembly.resolveOnMain(ServiceA.self)
        #expect(try await fromBackground === a)
        expectCreatedWhereRegistered(a)
    }

    @MainActor @Test func synchronousResolveOfAServiceMadeOnMain() throws {
        let assembly = Assembly()
        assembly.register(ServiceC.self, on: .main) { _ in ServiceC(createdOnMain: QueueExecutor.main.isCurrent) }
        #expect(try assembly.resolveOnMain(ServiceC.self).createdOnMain)
    }

    @Test func synchronousResolveOffMainThrowsInsteadOfBlocking() async {
        let assembly = seedChain()
        #expect {
            try assembly.resolveOnMain(ServiceA.self)
        } throws: { error in
            (error as? AssemblyError)?.code == .notOnMain
        }
        #expect(assembly.resolveIfCreated(ServiceA.self) == nil)
    }

    // MARK: - Exactly one creation

    @Test func thousandConcurrentFirstResolvesCallTheFactoryOnce() async throws {
        let requests = 1_000
        let waiting = Atomic<Int>(0)
        let calls = Atomic<Int>(0)
        let everyoneWaits = OnceCell<Void>()
        // The factory finishes only once all 1,000 resolves are waiting, so all are truly concurrent.
        let assembly = Assembly(onWait: {
            if waiting.add(1, ordering: .relaxed).newValue == requests { everyoneWaits.settle(()) }
        })
        assembly.register(Widget.self) { _ in
            calls.add(1, ordering: .relaxed)
            await everyoneWaits.waitIgnoringCancellation()
            return Widget()
        }
        let identities = try await withThrowingTaskGroup(of: ObjectIdentifier.self) { group in
            for _ in 0..<requests {
                group.addTask { ObjectIdentifier(try await assembly.resolve(Widget.self)) }
            }
            return try await group.reduce(into: Set<ObjectIdentifier>()) { $0.insert($1) }
        }
        #expect(identities.count == 1)
        #expect(calls.load(ordering: .relaxed) == 1)
    }

    @Test func failedCreationReachesEveryWaiterAndIsNotCached() async throws {
        let requests = 10
        let waiting = Atomic<Int>(0)
        let attempts = Atomic<Int>(0)
        let everyoneWaits = OnceCell<Void>()
        let assembly = Assembly(onWait: {
            if waiting.add(1, ordering: .relaxed).newValue == requests { everyoneWaits.settle(()) }
        })
        assembly.register(Widget.self) { _ in
            if attempts.add(1, ordering: .relaxed).newValue == 1 {
                await everyoneWaits.waitIgnoringCancellation()
                throw Boom()
            }
            return Widget()
        }
        let failures = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<requests {
                group.addTask {
                    do {
                        _ = try await assembly.resolve(Widget.self)
                        return false
                    } catch {
                        return error as? Boom == Boom()
                    }
                }
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(failures == requests)
        #expect(assembly.resolveIfCreated(Widget.self) == nil)
        let widget = try await assembly.resolve(Widget.self)
        #expect(assembly.resolveIfCreated(Widget.self) === widget)
        #expect(attempts.load(ordering: .relaxed) == 2)
    }

    // MARK: - Cycles

    @Test func cycleAcrossExecutorsIsAnErrorWithThePath() async {
        let background = QueueExecutor(label: "background")
        let assembly = Assembly()
        assembly.register(CycleA.self, on: .main) { resolver in
            _ = try await resolver.resolve(CycleB.self)
            return CycleA()
        }
        assembly.register(CycleB.self, on: background) { resolver in
            _ = try await resolver.resolve(CycleA.self)
            return CycleB()
        }
        let error = await #expect(throws: AssemblyError.self) { try await assembly.resolve(CycleA.self) }
        #expect(error?.code == .cycle)
        #expect(error?.path == ["\(CycleA.self)", "\(CycleB.self)", "\(CycleA.self)"])
        #expect(error?.message == "factories form a loop: \(CycleA.self) → \(CycleB.self) → \(CycleA.self)")
    }

    @MainActor @Test func cycleResolvedSynchronouslyOnMainIsAnError() {
        let assembly = Assembly()
        assembly.register(CycleA.self, on: .main) { resolver in
            _ = try await resolver.resolve(CycleB.self)
            return CycleA()
        }
        assembly.register(CycleB.self, on: QueueExecutor(label: "background")) { resolver in
            _ = try await resolver.resolve(CycleA.self)
            return CycleB()
        }
        #expect {
            try assembly.resolveOnMain(CycleA.self)
        } throws: { error in
            (error as? AssemblyError)?.code == .cycle
        }
    }

    /// Two tasks enter the cycle from opposite ends at once: A waits for B's creation while B
    /// waits for A's. However they interleave, both get a cycle error, and neither hangs.
    @Test func cycleEnteredFromBothEndsAtOnceIsAnErrorForBoth() async {
        for _ in 0..<200 {
            let assembly = Assembly()
            assembly.register(CycleA.self) { resolver in
                _ = try await resolver.resolve(CycleB.self)
                return CycleA()
            }
            assembly.register(CycleB.self) { resolver in
                _ = try await resolver.resolve(CycleA.self)
                return CycleB()
            }
            async let a = failure { _ = try await assembly.resolve(CycleA.self) }
            async let b = failure { _ = try await assembly.resolve(CycleB.self) }
            let errors = await [a, b]
            #expect(errors.map { ($0 as? AssemblyError)?.code } == [.cycle, .cycle])
        }
    }

    @Test func serviceCannotNeedItselfEvenAsTransient() async {
        let assembly = Assembly()
        assembly.register(Widget.self, scope: .transient) { resolver in try await resolver.resolve(Widget.self) }
        let error = await #expect(throws: AssemblyError.self) { try await assembly.resolve(Widget.self) }
        #expect(error?.path == ["\(Widget.self)", "\(Widget.self)"])
    }

    // MARK: - Lookup and scopes

    @Test func unknownServiceIsAnErrorNamingTypeAndName() async {
        let assembly = Assembly()
        assembly.register(Widget.self) { _ in Widget() }
        let error = await #expect(throws: AssemblyError.self) { try await assembly.resolve(Widget.self, name: "spare") }
        #expect(error?.code == .unknownService)
        #expect(error?.message == "no service \(Widget.self)[\"spare\"] is registered")
    }

    @Test func namedRegistrationsAreDistinct() async throws {
        let assembly = Assembly()
        assembly.register(Logger.self, name: "network") { _ in Logger(tag: "network") }
        assembly.register(Logger.self) { _ in Logger(tag: "default") }
        #expect(try await assembly.resolve(Logger.self, name: "network").tag == "network")
        #expect(try await assembly.resolve(Logger.self).tag == "default")
    }

    @Test func transientServiceIsCreatedForEveryRequest() async throws {
        let assembly = Assembly()
        assembly.register(Widget.self, scope: .transient) { _ in Widget() }
        let first = try await assembly.resolve(Widget.self)
        let second = try await assembly.resolve(Widget.self)
        #expect(first !== second)
        #expect(assembly.resolveIfCreated(Widget.self) == nil)
    }

    @Test func weakServiceLivesWhileHeld() async throws {
        let calls = Atomic<Int>(0)
        let assembly = Assembly()
        assembly.register(Widget.self, scope: .weak) { _ in
            calls.add(1, ordering: .relaxed)
            return Widget()
        }
        do {
            let held = try await assembly.resolve(Widget.self)
            #expect(try await assembly.resolve(Widget.self) === held)
            #expect(assembly.resolveIfCreated(Widget.self) === held)
        }
        #expect(calls.load(ordering: .relaxed) == 1)
        #expect(assembly.resolveIfCreated(Widget.self) == nil)
        _ = try await assembly.resolve(Widget.self)
        #expect(calls.load(ordering: .relaxed) == 2)
    }

    // MARK: - Overrides

    /// Runs in parallel with itself (one case per argument) and with the test below; each
    /// sees only its own override.
    @Test(arguments: 0..<8) func overridesAreScopedToTheirTask(index: Int) async throws {
        let tag = "test \(index)"
        try await sharedAssembly.withOverrides {
            $0.override(Logger.self, with: Logger(tag: tag))
        } operation: {
            let greeter = try await sharedAssembly.resolve(Greeter.self)
            #expect(greeter.logger.tag == tag)
            async let fromChild = sharedAssembly.resolve(Logger.self)
            let childLogger = try await fromChild
            #expect(childLogger.tag == tag)
            #expect(sharedAssembly.resolveIfCreated(Logger.self)?.tag == tag)
        }
    }

    @Test func withoutOverridesTheRealServicesAreUsed() async throws {
        #expect(try await sharedAssembly.resolve(Greeter.self).logger.tag == "real")
    }

    @Test func overrideFactoryKeepsTheRegisteredExecutor() async throws {
        let assembly = seedChain()
        let a = try await assembly.withOverrides {
            $0.override(ServiceC.self) { _ in ServiceC(createdOnMain: QueueExecutor.main.isCurrent) }
        } operation: {
            try await assembly.resolve(ServiceA.self)
        }
        expectCreatedWhereRegistered(a)
        #expect(assembly.resolveIfCreated(ServiceA.self) == nil)
    }
}

/// The error `body` throws, or `nil`.
private func failure(_ body: () async throws -> Void) async -> (any Error)? {
    do {
        try await body()
        return nil
    } catch {
        return error
    }
}
