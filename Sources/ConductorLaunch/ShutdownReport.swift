/// What ``Launcher/shutdown()`` did: each succeeded task's undo, its outcome and when it
/// ran. Times are offsets from the start of the launch, like the launch's ``RunReport``, so
/// the two draw on one time axis.
///
/// ```swift
/// let shutdown = await launcher.shutdown()
/// for undo in shutdown.undos where !undo.outcome.isSuccess {
///     logger.error("undo of \(undo.task): \(undo.outcome)")
/// }
/// print(shutdown)  // "shutdown in 120 ms · 3 undone, 1 failed"
/// ```
public struct ShutdownReport: Sendable, CustomStringConvertible {
    /// Every undo, in the order they ended.
    public let undos: [UndoRecord]
    /// When the shutdown began to undo (after cancelling the launch, if it was running).
    public let startedAt: Duration
    /// When the last undo ended.
    public let endedAt: Duration

    package init(undos: [UndoRecord], startedAt: Duration, endedAt: Duration) {
        self.undos = undos
        self.startedAt = startedAt
        self.endedAt = endedAt
    }

    /// From the first undo's start to the last one's end.
    public var duration: Duration { endedAt - startedAt }

    /// Whether no undo failed or timed out (true when there was nothing to undo). Undos cut
    /// short by a cancelled shutdown (``UndoOutcome/cancelled``) are no failure: the caller
    /// asked for it.
    public var isSuccess: Bool { failures.isEmpty }

    /// The undos that failed or timed out: what `Launcher.undo()` throws and
    /// `LauncherService` ends its group with.
    package var failures: [UndoRecord] {
        undos.filter { !$0.outcome.isSuccess && !$0.outcome.isCancelled }
    }

    /// The undos a cancelled shutdown cut short: running ones it stopped waiting for, and
    /// those it did not call.
    package var cutShort: [UndoRecord] {
        undos.filter(\.outcome.isCancelled)
    }

    /// The undo of the task named `task`, if it was undone.
    public subscript(task: String) -> UndoRecord? {
        undos.first { $0.task == task }
    }

    public var description: String {
        var counts: [String] = []
        let undone = undos.count { $0.outcome.isSuccess }
        let failed = undos.count { if case .failed = $0.outcome { true } else { false } }
        let cutShort = undos.count(where: \.outcome.isCancelled)
        let timedOut = undos.count - undone - failed - cutShort
        counts.append("\(undone) undone")
        if failed > 0 { counts.append("\(failed) failed") }
        if timedOut > 0 { counts.append("\(timedOut) timed out") }
        if cutShort > 0 { counts.append("\(cutShort) cut short") }
        return "shutdown in \(duration.shortDescription) · " + counts.joined(separator: ", ")
    }
}

/// One task's undo during ``Launcher/shutdown()``. Times are offsets from the launch's start.
public struct UndoRecord: Sendable, CustomStringConvertible {
    /// The task's name.
    public let task: String
    /// How its undo ended.
    public let outcome: UndoOutcome
    /// When its ``StartupTask/undo()`` was called.
    public let startedAt: Duration
    /// When it returned, threw, its deadline passed or the shutdown was cancelled.
    public let endedAt: Duration

    /// How long it took.
    package init(task: String, outcome: UndoOutcome, startedAt: Duration, endedAt: Duration) {
        self.task = task
        self.outcome = outcome
        self.startedAt = startedAt
        self.endedAt = endedAt
    }

    public var duration: Duration { endedAt - startedAt }

    public var description: String { "\(task): \(outcome)" }
}

/// How a task's ``StartupTask/undo()`` ended.
public enum UndoOutcome: Sendable, CustomStringConvertible {
    /// It returned.
    case undone
    /// It threw.
    case failed(any Error)
    /// The launcher's `undoTimeout` passed first: the undo was cancelled and abandoned, and
    /// the shutdown went on.
    case timedOut(after: Duration)
    /// Cut short: the shutdown was cancelled (its calling task, as a cancelled `ServiceGroup`
    /// does) before the undo ended. A running undo was cancelled and is no longer waited for:
    /// one that ignores cancellation may still be running after ``Launcher/shutdown()`` has
    /// returned. One not begun yet was not called at all (its record ends when it starts).
    /// Not a failure: see ``ShutdownReport/isSuccess``.
    case cancelled

    /// Whether the undo returned.
    public var isSuccess: Bool {
        if case .undone = self { return true }
        return false
    }

    var isCancelled: Bool {
        if case .cancelled = self { return true }
        return false
    }

    /// What the undo threw, for ``failed(_:)``; `nil` for every other outcome. In a report
    /// read back from a file it is a ``RecordedFailure``, which keeps the error's type, code
    /// and message but not the value.
    public var error: (any Error)? {
        if case .failed(let error) = self { return error }
        return nil
    }

    public var description: String {
        switch self {
        case .undone: "undone"
        case .failed(let error): "failed: \(error)"
        case .timedOut(let after): "timed out after \(after.shortDescription)"
        case .cancelled: "cut short: the shutdown was cancelled"
        }
    }
}
