/// Where a failed executor check goes: a crash with a message that names the object and the
/// executor it belongs to, or — in tests — a handler that records it, so the test runner survives.
package enum IsolationFailure {
    /// Replaces the crash for the current task, for tests:
    /// `IsolationFailure.$handler.withValue({ messages.append($0) }) { … }`.
    /// Read only after a check has failed, so it costs nothing on the fast path.
    @TaskLocal package static var handler: (@Sendable (String) -> Void)?

    package static func report(_ message: String, file: StaticString = #file, line: UInt = #line) {
        if let handler {
            handler(message)
        } else {
            preconditionFailure(message, file: file, line: line)
        }
    }
}
