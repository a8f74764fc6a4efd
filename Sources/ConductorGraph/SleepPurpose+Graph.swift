/// The graph's sleeps, as a test clock tells them apart.
extension SleepPurpose {
    /// A graph run's timer: the timeouts of its tasks' attempts.
    package static let taskTimeout = SleepPurpose("taskTimeout")
    /// The pause before a graph task's next attempt.
    package static let retryBackoff = SleepPurpose("retryBackoff")
}
