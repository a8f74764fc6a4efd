import Conductor

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
