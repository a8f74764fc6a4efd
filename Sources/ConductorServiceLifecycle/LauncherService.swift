public import Conductor
public import Logging
public import ServiceLifecycle

/// A ``Launcher`` as a swift-service-lifecycle `Service`: the launch runs when the
/// `ServiceGroup` starts, and the launcher's shutdown — its tasks' undos, in reverse
/// dependency order — runs on graceful shutdown.
///
/// ```swift
/// let launcher = Launcher("server")
/// try launcher.add(ClosureStartupTask("config") { try await config.load() })
/// try launcher.add(ClosureStartupTask("database", run: { try await pool.open() }, undo: { await pool.close() }))
/// let startup = LauncherService(launcher)
///
/// let group = ServiceGroup(
///     services: [startup, HTTPServer(waitingFor: startup)],
///     gracefulShutdownSignals: [.sigterm],
///     logger: logger
/// )
/// try await group.run()
/// ```
///
/// Its ``run()``:
/// 1. starts the launch, and announces its end to everyone waiting in ``launched()``;
/// 2. if the launch completed, waits for graceful shutdown (or cancellation of the group);
/// 3. runs ``Launcher/shutdown()``: cancels the launch if it is still running, then undoes
///    what succeeded.
///
/// It throws the launch's ``LaunchError`` if a required task failed (after undoing what had
/// succeeded), so the group ends as its failure termination behaviour says; and
/// ``LaunchError/Code/undoFailed``, naming each undo that failed or timed out, if the
/// shutdown was not clean. A graceful shutdown during the launch cancels it and is not a
/// failure.
///
/// Add it to one group, once: `run()` drives the launcher's one launch and one shutdown.
public final class LauncherService: Service, Sendable {
    /// The launcher this service runs.
    public let launcher: Launcher
    private let logger: Logger?
    /// How the launch ended, for ``launched()``: resolved once, when the launch ends.
    private let launchEnded = OnceCell<Result<Void, LaunchError>>()

    /// A service that runs `launcher`.
    ///
    /// - Parameter logger: Receives a line when the launch ends and when the shutdown
    ///   finishes, with every undo that failed. The launcher's own logger (see
    ///   ``Launcher/init(_:dependsOn:isRequired:clock:undoTimeout:logger:telemetry:)``) logs
    ///   each task.
    public init(_ launcher: Launcher, logger: Logger? = nil) {
        self.launcher = launcher
        self.logger = logger
    }

    /// Waits until the launch has completed: what a service that needs the start-up work
    /// done (an HTTP server, a queue consumer) awaits before it begins. Throws the launch's
    /// ``LaunchError`` if it failed or was cancelled, at once if it already has. Cancelling
    /// the waiting task throws ``LaunchError/Code/cancelled`` and leaves the launch alone.
    ///
    /// For a point earlier than the whole launch, add a readiness set and await
    /// ``Launcher/ready(_:timeout:)`` instead.
    public func launched() async throws(LaunchError) {
        guard let result = await launchEnded.wait() else { throw LaunchError.cancelled() }
        try result.get()
    }

    /// Runs the launch, waits for graceful shutdown, then shuts the launcher down; see
    /// ``LauncherService``.
    public func run() async throws {
        let outcome = await launch()
        switch outcome {
        case .success:
            logger?.info("launch completed", metadata: ["launcher": "\(launcher.name)"])
            launchEnded.resolve(.success(()))
            // Returns on graceful shutdown; throws if the group is cancelled instead. Either
            // way the launcher is shut down: undos close what the launch opened.
            try? await gracefulShutdown()
        case .failure(let error):
            // Cancelled by a graceful shutdown (or the group's cancellation) is no failure.
            logger?.log(
                level: error.code == .cancelled ? .notice : .error, "launch did not complete",
                metadata: ["launcher": "\(launcher.name)", "error": "\(error.message)"])
            launchEnded.resolve(.failure(error))
        }
        let shutdown = await launcher.shutdown()
        let failures = shutdown.undos.filter { !$0.outcome.isSuccess }
        if failures.isEmpty {
            logger?.info("shutdown completed", metadata: ["launcher": "\(launcher.name)", "shutdown": "\(shutdown)"])
        } else {
            logger?.error(
                "shutdown completed with failures",
                metadata: [
                    "launcher": "\(launcher.name)", "shutdown": "\(shutdown)",
                    "failures": .array(failures.map { .string("\($0)") }),
                ])
        }
        if case .failure(let error) = outcome, error.code != .cancelled { throw error }
        if !failures.isEmpty { try await launcher.undo() }
    }

    /// Starts the launch and waits for its end; a graceful shutdown (or cancellation)
    /// meanwhile cancels it.
    private func launch() async -> Result<Void, LaunchError> {
        let launcher = self.launcher
        // `run()` starts the launch under its own cancellation handler: started here, before
        // any handler, a cancelled service would let the launch's first tasks begin.
        return await withTaskCancellationOrGracefulShutdownHandler {
            do {
                try await launcher.run()
                return .success(())
            } catch let error as LaunchError {
                return .failure(error)
            } catch {
                // `run()` throws only launch errors; anything else is the cancellation it reports.
                return .failure(.cancelled())
            }
        } onCancelOrGracefulShutdown: {
            launcher.cancel()
        }
    }
}
