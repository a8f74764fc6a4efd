/// One start-up concern — pick the network channel, load the server config, check for a new
/// version — that a ``Launcher`` runs.
///
/// ```swift
/// struct LoadConfig: StartupTask {
///     let name = "config"
///     var options: TaskOptions { TaskOptions(timeout: .seconds(5), retry: .attempts(3)) }
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
///     var dependencies: TaskDependencies { ["config"] }
///     var runsOnMainActor: Bool { true }
///     @MainActor func run() async throws { AppWindow.shared.showHome() }
/// }
/// ```
///
/// Only ``name`` and ``run()`` are required. By default a task runs
/// ``TaskDependencies/inOrderOfAddition`` (see ``dependencies``), on the global executors,
/// with the default ``TaskOptions`` (required, tried once, no time limit), and has nothing to
/// undo.
public protocol StartupTask: Sendable {
    /// A unique, non-empty name: what reports, traces, errors and observers call the task.
    var name: String { get }

    /// What the task waits for. ``TaskDependencies/inOrderOfAddition`` (the default): run
    /// once the tasks added before this one with that same setting have ended, whatever their
    /// outcome — in effect, after the previous such task, as a hand-written start-up sequence
    /// would. Tasks added with named dependencies, or ``TaskDependencies/independent``, are not
    /// part of that sequence: a task added after one of them does not wait for it. Named
    /// dependencies (``TaskDependencies/on(_:)`` or an array literal): run as soon as these
    /// tasks or readiness sets have succeeded, in parallel with everything else; the names must
    /// have been added first. ``TaskDependencies/independent``: run at once.
    var dependencies: TaskDependencies { get }

    /// Whether the launcher calls ``run()`` from the main actor. Declare `run()` `@MainActor`
    /// too, so that its body stays there after its first suspension.
    var runsOnMainActor: Bool { get }

    /// How the task runs, as for a graph task (``TaskOptions``): its priority (which orders
    /// nothing here, since a launcher sets no concurrency limit, but is the base priority
    /// ``run()`` runs at), its timeout (the attempt is cancelled and abandoned, and counts as
    /// failed: a required task's timeout ends the launch), its retry policy (waits measured on
    /// the launcher's clock), whether the launch fails when it fails (``FailurePolicy/required``,
    /// the default) or reports it and goes on (``FailurePolicy/optional``; removing a task is
    /// no failure), and whether it is skipped or runs anyway when a dependency did not succeed.
    /// ``Launcher/add(_:)`` rejects a negative timeout or backoff
    /// (``LaunchError/Code/negativeDuration``), and fewer than 1 attempt or a multiplier below 1
    /// (``LaunchError/Code/invalidConfiguration``), naming the task.
    var options: TaskOptions { get }

    /// Does the work. Return to complete, throw to fail; cancellation (the task was removed,
    /// or the launch stopped, or its timeout passed) arrives as task cancellation. It runs at
    /// the base priority of ``options``, with the task-local values in force where the launch
    /// was started.
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
    public var dependencies: TaskDependencies { .inOrderOfAddition }
    public var runsOnMainActor: Bool { false }
    public var options: TaskOptions { TaskOptions() }
    public func undo() async throws {}
}
