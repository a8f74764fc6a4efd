public import ConductorLaunch
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
/// List it before the services that wait for it in ``launched()``: a group shuts its services
/// down in the reverse of the order given, so they stop before the launcher undoes what they
/// use.
///
/// Its ``run()``:
/// 1. starts the launch, and announces its end to everyone waiting in ``launched()`` — a
///    failed launch's only after step 3;
/// 2. waits for graceful shutdown — its own turn in the group's order — or cancellation of the
///    group, whether the launch completed or was cancelled;
/// 3. runs ``Launcher/shutdown()``: cancels the launch if it is still running, then undoes
///    what succeeded.
///
/// A graceful shutdown during the launch cancels it at once, whichever service hears it first
/// (a service waiting in ``launched()`` hears it before the launcher), and is not a failure:
/// the waiting services hear `false` and return without serving, and the service undoes what
/// had succeeded at its turn. It throws the launch's ``LaunchError`` if a required task failed
/// (after undoing what had succeeded, and only then telling the services waiting in
/// ``launched()``), so the group ends as its failure termination behaviour says; and ``LaunchError/Code/undoFailed``, naming each undo that failed or timed out, if the
/// shutdown was not clean. A `ServiceGroup` rethrows that error as it is, so the caller of
/// its `run()` matches the cause through ``LaunchError/underlyingError`` — what the failed task
/// (or the first failed undo) threw — and ``LaunchError/undoFailures``:
///
/// ```swift
/// do {
///     try await group.run()
/// } catch let error as LaunchError where error.code == .taskFailed {
///     if error.underlyingError is AuthError { logger.critical("the database refused our credentials") }
/// }
/// ```
/// A cancelled group cuts the shutdown short (see
/// ``Launcher/shutdown()``): the undos it cut short are logged, and are not a failure.
///
/// Add it to one group, once: `run()` drives the launcher's one launch and one shutdown. The
/// group's log lines and errors call it by its ``description``, `LauncherService(name)`, with
/// the launcher's name.
public final class LauncherService: Service, Sendable, CustomStringConvertible {
    /// The launcher this service runs.
    public let launcher: Launcher
    private let logger: Logger?
    /// How the launch ended, for ``launched()``: resolved once, when the launch ends.
    private let launchEnded = OnceCell<Result<Void, LaunchError>>()

    /// A service that runs `launcher`.
    ///
    /// - Parameter logger: Receives a line when the launch ends and when the shutdown
    ///   finishes, with every undo that failed or was cut short. The launcher's own logger (see
    ///   ``Launcher/init(_:dependsOn:options:clock:undoTimeout:logger:telemetry:)``) logs
    ///   each task.
    public init(_ launcher: Launcher, logger: Logger? = nil) {
        self.launcher = launcher
        self.logger = logger
    }

    /// `LauncherService(name)`, with the launcher's name: what a `ServiceGroup` calls the
    /// service in its log lines and errors, so two launchers can be told apart.
    public var description: String { "LauncherService(\(launcher.name))" }

    /// Waits until the launch has ended, and says whether to go on: what a service that needs
    /// the start-up work done (an HTTP server, a queue consumer) awaits before it begins.
    ///
    /// ```swift
    /// func run() async throws {
    ///     guard try await startup.launched() else { return }  // shut down during the launch
    ///     // … serve until graceful shutdown …
    /// }
    /// ```
    ///
    /// - Returns: `true` once the launch has completed. `false` once the calling service is
    ///   shutting down gracefully: return without starting. A graceful shutdown of the calling
    ///   service while it waits cancels the launch at once — in a `ServiceGroup` that is the
    ///   group shutting down, which reaches the services listed after the launcher first — and
    ///   answers `false` without waiting for the launch to wind down. A launch cancelled
    ///   otherwise (by ``Launcher/cancel()``, or by a graceful shutdown that reached another
    ///   service first) answers `false` only at the calling service's own graceful shutdown:
    ///   a service that returns from `run()` earlier would end its group. Outside a group,
    ///   with no graceful shutdown to wait for, that wait lasts until the task is cancelled.
    /// - Throws: The launch's ``LaunchError`` if a required task failed, once the launcher
    ///   has undone what had succeeded (at once if it already has).
    ///   ``LaunchError/Code/cancelled`` if the waiting task is cancelled, which leaves the
    ///   launch alone.
    ///
    /// For a point earlier than the whole launch, add a readiness set and await
    /// ``Launcher/ready(_:timeout:)`` instead.
    public func launched() async throws(LaunchError) -> Bool {
        let launchEnded = self.launchEnded
        // Graceful shutdown cancels the wait, which then answers `nil` as a cancelled one does.
        let ended = await cancelWhenGracefulShutdown { await launchEnded.wait() }
        if Task.isShuttingDownGracefully {
            // The group shuts the launcher down only after this service: stop the launch now
            // rather than let it run on (or complete) until the launcher's turn.
            launcher.cancel()
            return false
        }
        switch ended {
        case nil: throw LaunchError.cancelled()
        case .success: return true
        case .failure(let error) where error.code == .cancelled:
            // Returning now, before this service's turn, would end the group as a service that
            // finished unexpectedly, and cut the launcher's shutdown short.
            Self.waitingForGracefulShutdown?()
            do { try await gracefulShutdown() } catch { throw LaunchError.cancelled() }
            return false
        case .failure(let error): throw error
        }
    }

    /// Runs the launch, waits for graceful shutdown, then shuts the launcher down; see
    /// ``LauncherService``.
    public func run() async throws {
        let outcome = await launch()
        switch outcome {
        case .success:
            logger?.info("launch completed", metadata: ["launcher": "\(launcher.name)"])
        case .failure(let error):
            // Cancelled by a graceful shutdown (or the group's cancellation) is no failure.
            logger?.log(
                level: error.code == .cancelled ? .notice : .error, "launch did not complete",
                metadata: ["launcher": "\(launcher.name)", "error": "\(error.message)"])
        }
        if case .failure(let error) = outcome, error.code != .cancelled {
            // A failed launch ends the group: undo what succeeded, then tell the waiting
            // services and throw. Told first, they would throw and have the group cancel this
            // service, cutting its undos short.
            log(await launcher.shutdown())
            announce(outcome)
            throw error
        }
        announce(outcome)
        // Returns on graceful shutdown — at once if it has reached this service already —
        // and throws if the group is cancelled instead. A launch cancelled by a graceful
        // shutdown that reached another service first waits here for this service's turn:
        // the services listed after it stop before the undos close what they use.
        try? await gracefulShutdown()
        let shutdown = await launcher.shutdown()
        log(shutdown)
        let failures = shutdown.failures
        if !failures.isEmpty { throw LaunchError.undoFailed(failures, launcher: launcher.name) }
    }

    /// Tells the services waiting in ``launched()`` how the launch ended.
    private func announce(_ outcome: Result<Void, LaunchError>) {
        Self.announcingLaunchEnd?()
        launchEnded.settle(outcome)
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

    /// One line for the shutdown: info if clean, a warning naming the undos a cancelled group
    /// cut short, an error naming those that failed or timed out.
    private func log(_ shutdown: ShutdownReport) {
        guard let logger else { return }
        var metadata: Logger.Metadata = ["launcher": "\(launcher.name)", "shutdown": "\(shutdown)"]
        let failures = shutdown.failures
        let cutShort = shutdown.cutShort
        if !cutShort.isEmpty { metadata["cutShort"] = .array(cutShort.map { .string($0.task) }) }
        if !failures.isEmpty {
            metadata["failures"] = .array(failures.map { .string("\($0)") })
            logger.error("shutdown completed with failures", metadata: metadata)
        } else if !cutShort.isEmpty {
            logger.warning("shutdown cut short by cancellation", metadata: metadata)
        } else {
            logger.info("shutdown completed", metadata: metadata)
        }
    }
}
