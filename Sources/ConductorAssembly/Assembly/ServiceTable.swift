import Synchronization

/// The services of an assembly (or of one override scope): the lock around
/// ``ServiceTableState`` and the code that runs factories, never under the lock.
final class ServiceTable: Sendable {
    private let state: Lock<ServiceTableState>
    /// The assembly's own table, when this is an override scope's table.
    private let root: ServiceTable?
    /// Test hook (ServiceTable+Testing.swift); `nil` outside tests.
    let probe: ServiceTableProbe?

    init(
        _ state: sending ServiceTableState = ServiceTableState(),
        root: ServiceTable? = nil,
        probe: ServiceTableProbe? = nil
    ) {
        self.state = Lock(state)
        self.root = root
        self.probe = probe
    }

    /// Identifies the assembly this table belongs to, in ``ResolutionContext``.
    var assemblyID: ObjectIdentifier { ObjectIdentifier(root ?? self) }

    /// A table with the same registrations and nothing created, for an override scope.
    func makeScope() -> ServiceTable {
        let entries = state.withLock { $0.entries.mapValues { ServiceTableState.Entry(registration: $0.registration) } }
        return ServiceTable(ServiceTableState(entries: entries), root: root ?? self, probe: probe)
    }

    var registrations: [ServiceKey: ServiceRegistration] {
        state.withLock { $0.entries.mapValues(\.registration) }
    }

    func register(_ key: ServiceKey, _ registration: ServiceRegistration) {
        state.withLock { $0.register(key, registration) }
    }

    /// The hot path: one short locked dictionary lookup.
    func created(_ key: ServiceKey) -> ServiceInstance? {
        state.withLock { $0.created(key) }
    }

    /// Resolves `key` for a resolver on `path`.
    func resolve(_ key: ServiceKey, path: ResolutionPath) async throws -> ServiceInstance {
        switch state.withLock({ $0.lookup(key, path: path.keys, owner: path.owner) }) {
        case .found(let instance):
            return instance
        case .fail(let error):
            throw error
        case .createInline(let registration):
            return try await run(registration, path: path.appending(key, owner: path.owner))
        case .createShared(let registration, let id, let creation):
            let creationPath = path.appending(key, owner: id)
            // Its own task, so a requester that is cancelled does not fail the creation for the
            // other waiters. The task inherits the task-locals; the path travels explicitly.
            Task(executorPreference: registration.executor) {
                let result: Result<ServiceInstance, any Error>
                do {
                    result = .success(try await self.run(registration, path: creationPath))
                } catch {
                    result = .failure(error)
                }
                self.state.withLock { $0.finish(key, id, with: result) }
                creation.settle(result)
            }
            return try await wait(for: creation, id, waiter: path.owner)
        case .wait(let creation, let id):
            return try await wait(for: creation, id, waiter: path.owner)
        }
    }

    private func wait(
        for creation: ServiceTableState.Creation,
        _ id: ServiceTableState.CreationID,
        waiter: ServiceTableState.CreationID?
    ) async throws -> ServiceInstance {
        defer { state.withLock { $0.endWait(waiter, on: id) } }
        probe?.resolverWaits()
        guard let result = await creation.wait() else { throw CancellationError() }
        return try result.get()
    }

    /// Runs a factory on its executor, with `path` as the resolution path of everything it resolves.
    private func run(_ registration: ServiceRegistration, path: ResolutionPath) async throws -> ServiceInstance {
        var frames = ResolutionContext.current
        frames[assemblyID] = ResolutionContext.Frame(table: self, path: path)
        let resolver = Resolver(table: self, path: path)
        return try await ResolutionContext.$current.withValue(frames) {
            try await withTaskExecutorPreference(registration.executor) {
                try await registration.factory(resolver)
            }
        }
    }
}

/// The chain of services being created that led to a resolve: A's factory resolving B has
/// the path [A]. `owner` is the innermost creation shared with other requesters.
struct ResolutionPath: Sendable {
    var keys: [ServiceKey] = []
    var owner: ServiceTableState.CreationID?

    func appending(_ key: ServiceKey, owner: ServiceTableState.CreationID?) -> ResolutionPath {
        ResolutionPath(keys: keys + [key], owner: owner)
    }
}

/// What the current task is doing with each assembly: the table it resolves from (the
/// assembly's own, or an override scope's) and the path of the creation it is running.
enum ResolutionContext {
    struct Frame: Sendable {
        let table: ServiceTable
        let path: ResolutionPath
    }

    /// Keyed by ``ServiceTable/assemblyID``.
    @TaskLocal static var current: [ObjectIdentifier: Frame] = [:]
}
