import Logging

/// A swift-log handler that keeps every line, for assertions.
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
