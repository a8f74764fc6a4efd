/// A created service, type-erased so the table can hold services of any type, and read back
/// with `unsafeDowncast` (free in release builds) instead of a dynamic cast.
@usableFromInline
class ServiceInstance: @unchecked Sendable {
    // `@unchecked Sendable` is safe: the base class has no stored state, and its only subclass,
    // `TypedServiceInstance`, holds one immutable `Sendable` value.
}

@usableFromInline
final class TypedServiceInstance<Service: Sendable>: ServiceInstance, @unchecked Sendable {
    @usableFromInline let value: Service

    init(_ value: Service) { self.value = value }
}

/// How to make one service: the factory, its scope, and the executor it must run on.
struct ServiceRegistration: Sendable {
    let scope: ServiceScope
    let executor: QueueExecutor?
    let factory: @Sendable (Resolver) async throws -> ServiceInstance
    /// For the weak scope: the instance's object, to hold weakly.
    let object: @Sendable (ServiceInstance) -> AnyObject
    /// For the weak scope: a typed instance around a weakly held object that is still alive.
    let instance: @Sendable (AnyObject) -> ServiceInstance?

    init<Service: Sendable>(
        _ type: Service.Type,
        scope: ServiceScope,
        executor: QueueExecutor?,
        factory: @escaping @Sendable (Resolver) async throws -> Service
    ) {
        self.scope = scope
        self.executor = executor
        self.factory = { resolver in TypedServiceInstance(try await factory(resolver)) }
        self.object = { instance in unsafeDowncast(instance, to: TypedServiceInstance<Service>.self).value as AnyObject
        }
        self.instance = { object in (object as? Service).map { TypedServiceInstance($0) } }
    }
}
