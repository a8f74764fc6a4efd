/// A start-up task made of closures, for work too small to deserve a type of its own.
///
/// ```swift
/// try launcher.add(
///     ClosureStartupTask("cache", dependsOn: ["config"], options: TaskOptions(failure: .optional)) {
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
    public let dependencies: TaskDependencies
    public let options: TaskOptions
    private let body: @Sendable () async throws -> Void
    private let undoBody: @Sendable () async throws -> Void

    /// A task named `name` that runs `run`, and `undo` when the launcher shuts down after
    /// `run` succeeded.
    ///
    /// - Parameters:
    ///   - name: See ``StartupTask/name``.
    ///   - dependencies: See ``StartupTask/dependencies``; by default
    ///     ``TaskDependencies/inOrderOfAddition``: after the previous task added so (one added
    ///     with named dependencies, or independent, is not waited for).
    ///   - options: See ``StartupTask/options``.
    ///   - run: The work; see ``StartupTask/run()``.
    ///   - undo: What ``Launcher/shutdown()`` runs; see ``StartupTask/undo()``. Nothing by default.
    public init(
        _ name: String,
        dependsOn dependencies: TaskDependencies = .inOrderOfAddition,
        options: TaskOptions = TaskOptions(),
        run: @escaping @Sendable () async throws -> Void,
        undo: @escaping @Sendable () async throws -> Void = {}
    ) {
        self.name = name
        self.dependencies = dependencies
        self.options = options
        self.body = run
        self.undoBody = undo
    }

    public func run() async throws { try await body() }

    public func undo() async throws { try await undoBody() }
}
