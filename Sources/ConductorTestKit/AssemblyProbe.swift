public import Conductor

/// An `Assembly` that tells a test when resolvers wait for a creation in flight,
/// so the test can hold a factory until every racing resolver has joined it — without
/// sleeping or polling.
///
/// ```swift
/// let probe = AssemblyProbe()
/// let release = Latch()
/// probe.assembly.register(Database.self) { _ in
///     await release.wait()
///     return Database()
/// }
/// let first = Task { try await probe.assembly.resolve(Database.self) }
/// let second = Task { try await probe.assembly.resolve(Database.self) }
/// await probe.waiters(atLeast: 2)   // both wait on the one creation
/// release.open()
/// #expect(try await first.value === second.value)
/// ```
public final class AssemblyProbe: Sendable {
    private struct State {
        var waits = 0
        var waiters = CountWaiters<Void>()
    }

    /// The count, in a box of its own so the assembly's hook can hold it without holding the probe.
    private final class Counter: Sendable {
        let state = Lock(State())
    }

    /// The assembly to register services in and resolve from.
    public let assembly: Assembly
    private let counter = Counter()
    private var state: Lock<State> { _read { yield counter.state } }

    public init() {
        let counter = self.counter
        self.assembly = Assembly(onWait: {
            let ready = counter.state.withLock { state in
                state.waits += 1
                return state.waiters.takeSatisfied(by: state.waits)
            }
            for continuation in ready { continuation.resume() }
        })
    }

    /// How many times a resolver has started waiting for a creation in flight — the first
    /// requester of each creation included.
    public var waitCount: Int { state.withLock { $0.waits } }

    /// Suspends until resolvers have started waiting for creations in flight at least `count`
    /// times in all (the first requester of each creation counts), or the waiting task is
    /// cancelled.
    public func waiters(atLeast count: Int) async {
        await counter.state.wait(untilCountOf: { $0.waits }, reaches: count, waiters: \.waiters)
    }
}
