import Synchronization

/// A dependency-injection container that creates each service lazily, once, on the executor
/// it must be created on — without holding a lock while a factory runs, and turning a
/// dependency cycle into an error instead of a hang.
///
/// ```swift
/// let assembly = Assembly()
/// assembly.register(SecureStore.self, on: .main) { _ in SecureStore() }
/// assembly.register(Tracker.self, on: background) { resolver in
///     AppTracker(store: try await resolver.resolve(SecureStore.self))
/// }
///
/// let tracker = try await assembly.resolve(Tracker.self)
/// ```
///
/// Concurrent first requests for a singleton share one creation. A creation that fails is
/// not kept: its error reaches every waiter, and the next request tries again. Main-thread
/// code that cannot `await` uses ``resolveOnMain(_:name:)``.
///
/// - Complexity: resolving a service that was already created is one short locked
///   dictionary lookup.
public final class Assembly: Sendable {
    let root: ServiceTable
    /// How many ``withOverrides(_:operation:)`` scopes are running, in any task. While none
    /// is, a resolve skips reading the task-local context on its fast path.
    let overrideScopes = Atomic<Int>(0)

    public convenience init() {
        self.init(root: ServiceTable())
    }

    init(root: ServiceTable) {
        self.root = root
    }

    /// Registers how to make the service `type` (called `name`, if several share a type).
    /// A later registration for the same type and name replaces the earlier one.
    ///
    /// - Parameters:
    ///   - type: the type resolvers ask for.
    ///   - name: tells apart several services of one type; `nil` for the only one.
    ///   - scope: how long the service is kept. Singleton by default.
    ///   - executor: where the factory runs, for a service that must be created on a given
    ///     queue (the main queue, say). `nil` runs it on the global executor.
    ///   - factory: makes the service; it resolves its dependencies through the ``Resolver``.
    public func register<Service: Sendable>(
        _ type: Service.Type = Service.self,
        name: String? = nil,
        scope: ServiceScope = .singleton,
        on executor: QueueExecutor? = nil,
        factory: @escaping @Sendable (Resolver) async throws -> Service
    ) {
        root.register(
            ServiceKey(type, name: name),
            ServiceRegistration(type, scope: scope, executor: executor, factory: factory)
        )
    }

    /// The service registered for `type` and `name`, created if needed.
    ///
    /// Throws ``AssemblyError`` (`.unknownService`, `.cycle`) or the factory's own error.
    @inlinable
    public func resolve<Service: Sendable>(_ type: Service.Type = Service.self, name: String? = nil) async throws
        -> Service
    {
        // Inlinable so a service already created is read in the caller's frame: no async call
        // (a task-allocator frame and an executor check) and no generic metadata lookups.
        if let instance = createdInstance(of: type, name: name) { return instance.unwrap(Service.self) }
        return try await create(type, name: name).unwrap(Service.self)
    }

    /// The slow path of ``resolve(_:name:)``: the service was not created (or not seen created).
    @usableFromInline
    func create(_ type: any Any.Type, name: String?) async throws -> ServiceInstance {
        let key = ServiceKey(type, name: name)
        let frame = scopedFrame()
        let table = frame?.table ?? root
        let path = (frame ?? ResolutionContext.current[root.assemblyID])?.path ?? ResolutionPath()
        return try await table.resolve(key, path: path)
    }

    /// The service, if it has been created already (and for the weak scope, is still alive);
    /// never creates it. Callable from any thread.
    ///
    /// - Complexity: one short locked dictionary lookup, plus a task-local read while an
    ///   override scope is running somewhere.
    @inlinable
    public func resolveIfCreated<Service: Sendable>(_ type: Service.Type = Service.self, name: String? = nil)
        -> Service?
    {
        // Inlinable so the caller's specialization reads the value without generic metadata lookups.
        createdInstance(of: type, name: name)?.unwrap(Service.self)
    }

    @usableFromInline
    func createdInstance(of type: any Any.Type, name: String?) -> ServiceInstance? {
        let key = ServiceKey(type, name: name)
        let table = scopedFrame()?.table ?? root
        return table.created(key)
    }

    /// The current task's frame for this assembly, read only while an override scope runs.
    func scopedFrame() -> ResolutionContext.Frame? {
        guard overrideScopes.load(ordering: .relaxed) > 0 else { return nil }
        return ResolutionContext.current[root.assemblyID]
    }
}

extension ServiceInstance {
    /// The value of a typed instance. Every instance stored under a key was made by that key's
    /// registration, whose type is the key's type, so the unchecked downcast is sound.
    @inlinable
    func unwrap<Service: Sendable>(_ type: Service.Type) -> Service {
        unsafeDowncast(self, to: TypedServiceInstance<Service>.self).value
    }
}
