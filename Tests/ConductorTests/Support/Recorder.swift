import Conductor
import ConductorTestKit
import Synchronization

/// The suite's latch is the test kit's, which users get too.
typealias Latch = ConductorTestKit.Latch

/// Records things from many tasks, in the order they happened.
final class Recorder<Value: Sendable>: Sendable {
    private let values = Lock<[Value]>([])

    init() {}

    func append(_ value: Value) { values.withLock { $0.append(value) } }

    var all: [Value] { values.withLock { $0 } }
}

/// The tests' seeded generator: the library's, so a failing random test can be replayed.
typealias SeededGenerator = SplitMix64
