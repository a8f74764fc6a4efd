/// The answer to ``Launcher/ready(_:timeout:)`` about a readiness set that exists: ready, too
/// late, or never. (A name that was never added is a mistake in the code, thrown as
/// ``LaunchError/Code/unknownReadiness`` rather than answered.)
///
/// ```swift
/// switch try await launcher.ready("firstScreen", timeout: .seconds(2)) {
/// case .ready: showHome()
/// case .timedOut: showSkeleton()
/// case .failed(let error): showError(error.message)
/// }
/// ```
public enum LaunchReadiness: Hashable, Sendable, CustomStringConvertible {
    /// Every task of the set has ended (an optional one may have failed); `at` is the time
    /// since the launch started.
    case ready(at: Duration)
    /// The deadline passed first; the launch goes on.
    case timedOut(after: Duration)
    /// The set will never be ready: the launch failed or was cancelled, or the waiting task
    /// was cancelled. Also the answer when the deadline passed before the
    /// launcher was started (``LaunchError/Code/notStarted``), rather than
    /// ``timedOut(after:)``: no launch was under way to go on.
    case failed(LaunchError)

    /// Whether the set is ready.
    public var isReady: Bool {
        if case .ready = self { return true }
        return false
    }

    public var description: String {
        switch self {
        case .ready(let at): "ready at \(at.shortDescription)"
        case .timedOut(let after): "timed out after \(after.shortDescription)"
        case .failed(let error): "failed: \(error.message)"
        }
    }
}
