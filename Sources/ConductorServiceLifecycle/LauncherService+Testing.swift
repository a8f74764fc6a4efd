extension LauncherService {
    /// Called as `run()` tells the services waiting in ``launched()`` how the launch ended, so
    /// a test can order that against the undos.
    @TaskLocal package static var announcingLaunchEnd: (@Sendable () -> Void)?

    /// Called when ``launched()`` heard a cancelled launch and begins to wait for the calling
    /// service's graceful shutdown, so a test knows it waits rather than returned.
    @TaskLocal package static var waitingForGracefulShutdown: (@Sendable () -> Void)?
}
