/// What a factory resolves its dependencies with.
///
/// ```swift
/// assembly.register(Tracker.self, on: background) { resolver in
///     AppTracker(store: try await resolver.resolve(SecureStore.self))
/// }
/// ```
///
/// A resolver carries the resolution path explicitly, so a cycle is found even when the
/// factory resolves from a detached task, which does not inherit task-locals.
public struct Resolver: Sendable {
    let table: ServiceTable
    let path: ResolutionPath

    /// The service registered for `type` and `name`, created if needed.
    public func resolve<Service: Sendable>(_ type: Service.Type = Service.self, name: String? = nil) async throws
        -> Service
    {
        let key = ServiceKey(type, name: name)
        if let instance = table.created(key) { return instance.unwrap(Service.self) }
        return try await table.resolve(key, path: path).unwrap(Service.self)
    }
}
