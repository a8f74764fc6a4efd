/// One start-up concern — pick the network channel, load the server config, check for a new
/// version — that a ``Launcher`` runs.
///
/// ```swift
/// struct LoadConfig: StartupTask {
///     let name = "config"
///     var retry: RetryPolicy { .attempts(3) }
///     func run() async throws { try await ConfigStore.shared.load() }
/// }
///
/// struct OpenDatabasePool: StartupTask {
///     let name = "database"
///     let pool: DatabasePool
///     func run() async throws { try await pool.open() }
///     func undo() async throws { await pool.close() }   // run by `Launcher.shutdown()`
/// }
///
/// struct ShowHome: StartupTask {
///     let name = "home"
///     var dependencies: [String]? { ["config"] }
///     var runsOnMainActor: Bool { true }
///     @MainActor func run() async throws { AppWindow.shared.showHome() }
/// }
/// ```
///
/// Only ``name`` and ``run()`` are required. By default a task runs after the previous task
/// added without dependencies (see ``dependencies``), on the global executors, may not fail,
/// is tried once, and has nothing to undo.
public protocol StartupTask: Sendable {
    /// A unique, non-empty name: what reports, traces, errors and observers call the task.
    var name: String { get }

    /// `nil` (the default): run once the tasks added before this one that also declare no
    /// dependencies have ended, whatever their outcome — in effect, after the previous such
    /// task, as a hand-written start-up sequence would. Tasks that declare dependencies are
    /// not part of that sequence: a `nil` task added after one of them does not wait for it.
    /// A list (possibly empty): run as soon as these tasks or readiness sets have succeeded,
    /// in parallel with everything else. The names must have been added first.
    var dependencies: [String]? { get }

    /// Whether the launcher calls ``run()`` from the main actor. Declare `run()` `@MainActor`
    /// too, so that its body stays there after its first suspension.
    var runsOnMainActor: Bool { get }

    /// Whether the launch fails when this task fails (the default), or is skipped because a
    /// task it depends on did not succeed. An optional task's failure is reported, and the
    /// launch goes on. Removing a task is no failure.
    var isRequired: Bool { get }

    /// How often to try again after a failure; waits are measured on the launcher's clock.
    /// ``Launcher/add(_:)`` rejects a negative backoff, fewer than 1 attempt or a multiplier below
    /// 1, naming the task.
    var retry: RetryPolicy { get }

    /// Does the work. Return to complete, throw to fail; cancellation (the task was removed,
    /// or the launch stopped) arrives as task cancellation. It runs at `TaskPriority.medium`
    /// base priority, with the task-local values in force where the launch was started.
    func run() async throws

    /// Undoes what a successful ``run()`` did — close a pool, flush a queue — when
    /// ``Launcher/shutdown()`` runs. Called at most once, and only if ``run()`` succeeded;
    /// after every task that depended on this one has been undone, and concurrently with
    /// undos that are independent of it. Throw to report a failure: the shutdown goes on with
    /// the rest. It has the launcher's `undoTimeout` to finish; past it the shutdown cancels
    /// it, reports it as timed out and moves on. The default does nothing.
    func undo() async throws
}

extension StartupTask {
    public var dependencies: [String]? { nil }
    public var runsOnMainActor: Bool { false }
    public var isRequired: Bool { true }
    public var retry: RetryPolicy { .never }
    public func undo() async throws {}
}
