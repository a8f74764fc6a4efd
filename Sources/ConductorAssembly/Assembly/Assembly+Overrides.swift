import Synchronization

extension Assembly {
    /// Replacements for services, in effect inside one ``Assembly/withOverrides(_:isolation:operation:)``.
    ///
    /// ```swift
    /// try await assembly.withOverrides {
    ///     $0.override(LogSink.self) { _ in TestLogSink() }
    ///     $0.override((any Clock<Duration>).self, with: manualClock)
    /// } operation: {
    ///     let tracker = try await assembly.resolve(Tracker.self)  // built with TestLogSink
    /// }
    /// ```
    public struct Overrides: Sendable {
        var replacements: [(ServiceKey, ServiceRegistration)] = []
        let registrations: [ServiceKey: ServiceRegistration]

        /// Makes `type` (called `name`) with `factory` instead. It keeps the original
        /// registration's scope and executor, if there is one; otherwise it is a singleton.
        public mutating func override<Service: Sendable>(
            _ type: Service.Type = Service.self,
            name: String? = nil,
            factory: @escaping @Sendable (Resolver) async throws -> Service
        ) {
            let key = ServiceKey(type, name: name)
            let original = registrations[key]
            replacements.append(
                (
                    key,
                    ServiceRegistration(
                        type,
                        scope: original?.scope ?? .singleton,
                        executor: original?.executor,
                        factory: factory
                    )
                )
            )
        }

        /// Uses `value` for `type` (called `name`).
        public mutating func override<Service: Sendable>(
            _ type: Service.Type = Service.self,
            name: String? = nil,
            with value: Service
        ) {
            let key = ServiceKey(type, name: name)
            replacements.append((key, ServiceRegistration(type, scope: .singleton, executor: nil) { _ in value }))
        }
    }

    /// Runs `operation` with some services replaced, for a test.
    ///
    /// The overrides are seen only by `operation` and the tasks it starts (they are scoped by a
    /// task-local), so tests running in parallel never see each other's. Inside, every service
    /// is created afresh for the scope — a singleton created outside might hold a real
    /// dependency — and lives as long as the scope. Register services before entering it.
    public func withOverrides<Result>(
        _ configure: (inout Overrides) -> Void,
        isolation: isolated (any Actor)? = #isolation,
        operation: () async throws -> Result
    ) async rethrows -> Result {
        let scope = root.makeScope()
        var overrides = Overrides(registrations: scope.registrations)
        configure(&overrides)
        for (key, registration) in overrides.replacements {
            scope.register(key, registration)
        }
        var frames = ResolutionContext.current
        frames[root.assemblyID] = ResolutionContext.Frame(table: scope, path: ResolutionPath())
        overrideScopes.add(1, ordering: .relaxed)
        defer { overrideScopes.subtract(1, ordering: .relaxed) }
        return try await ResolutionContext.$current.withValue(frames) {
            try await operation()
        }
    }
}
