/// A start-up task made of closures, for work too small to deserve a type of its own.
///
/// ```swift
/// try launcher.add(
///     ClosureStartupTask("cache", dependsOn: ["config"]) {
///         try await cache.warm()
///     } undo: {
///         await cache.flush()
///     })
/// ```
///
/// It runs on the global executors; a task that must run on the main actor is a type that
/// adopts ``StartupTask`` with a `@MainActor` ``StartupTask/run()``.
public struct ClosureStartupTask: StartupTask {
    public let name: String
    public let dependencies: [String]?
    public let isRequired: Bool
    public let retry: RetryPolicy
    private let body: @Sendable () async throws -> Void
    private let undoBody: @Sendable () async throws -> Void

    /// A task named `name` that runs `run`, and `undo` when the launcher shuts down after
    /// `run` succeeded.
    ///
    /// - Parameters:
    ///   - name: See ``StartupTask/name``.
    ///   - dependencies: See ``StartupTask/dependencies``; `nil` runs it after the previous
    ///     task added without dependencies (one added with dependencies is not waited for).
    ///   - isRequired: See ``StartupTask/isRequired``.
    ///   - retry: See ``StartupTask/retry``.
    ///   - run: The work; see ``StartupTask/run()``.
    ///   - undo: What ``Launcher/shutdown()`` runs; see ``StartupTask/undo()``. Nothing by default.
    public init(
        _ name: String,
        dependsOn dependencies: [String]? = nil,
        isRequired: Bool = true,
        retry: RetryPolicy = .never,
        run: @escaping @Sendable () async throws -> Void,
        undo: @escaping @Sendable () async throws -> Void = {}
    ) {
        self.name = name
        self.dependencies = dependencies
        self.isRequired = isRequired
        self.retry = retry
        self.body = run
        self.undoBody = undo
    }

    public func run() async throws { try await body() }

    public func undo() async throws { try await undoBody() }
}
