/// How long an ``Assembly`` keeps a service it created.
///
/// ```swift
/// assembly.register(Tracker.self, scope: .singleton) { _ in AppTracker() }
/// assembly.register(Request.self, scope: .transient) { _ in Request() }
/// assembly.register(ImageCache.self, scope: .weak) { _ in ImageCache() }
/// ```
public struct ServiceScope: Hashable, Sendable, CustomStringConvertible {
    fileprivate enum Kind: Hashable, Sendable {
        case singleton, transient, weak
    }

    fileprivate let kind: Kind

    /// Created on first request, once; concurrent first requests share that one creation.
    public static let singleton = ServiceScope(kind: .singleton)
    /// Created anew for every request.
    public static let transient = ServiceScope(kind: .transient)
    /// Shared while someone holds it, created again after it was released. Concurrent first
    /// requests share one creation. Only a class instance can be held weakly; a value is
    /// released at once, so it behaves as `transient`.
    public static let weak = ServiceScope(kind: .weak)

    var isTransient: Bool { kind == .transient }
    var isWeak: Bool { kind == .weak }

    public var description: String { "\(kind)" }
}
