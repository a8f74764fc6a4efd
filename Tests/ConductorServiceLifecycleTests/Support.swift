import Conductor
import Logging

/// Records things from many tasks, in the order they happened.
final class Recorder<Value: Sendable>: Sendable {
    private let values = Lock<[Value]>([])

    init() {}

    func append(_ value: Value) { values.withLock { $0.append(value) } }

    var all: [Value] { values.withLock { $0 } }
}

struct Refused: Error, CustomStringConvertible {
    var description: String { "refused" }
}

extension Logger {
    /// A logger for the services under test that prints nothing: the tests check outcomes, and
    /// a failing undo's error line would read like a failure of the run.
    static let quiet = Logger(label: "conductor.tests", factory: { _ in SwiftLogNoOpLogHandler() })
}

/// A swift-log handler that keeps every line, for the tests that check what is logged.
struct CapturingLogHandler: LogHandler {
    struct Line: Sendable {
        var level: Logger.Level
        var message: String
        var metadata: Logger.Metadata
    }

    let lines = Recorder<Line>()
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        lines.append(Line(level: event.level, message: "\(event.message)", metadata: event.metadata ?? [:]))
    }
}
