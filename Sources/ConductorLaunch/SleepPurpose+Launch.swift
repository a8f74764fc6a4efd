/// The launcher's sleeps, as a test clock tells them apart. (Its tasks' timeouts are the
/// graph's `taskTimeout`: they run in a graph run.)
extension SleepPurpose {
    /// A launcher's readiness deadlines: `ready(_:timeout:)`.
    package static let launchReadyTimeout = SleepPurpose("launchReadyTimeout")
    /// A launcher's deadline for each task's undo during `shutdown()`.
    package static let launchUndoTimeout = SleepPurpose("launchUndoTimeout")
}
