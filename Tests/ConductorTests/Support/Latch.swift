import Conductor
import Synchronization

/// A one-way signal for tests: tasks `wait()` until someone calls `open()`.
/// It lets a test hold a task "running" for as long as it needs, without sleeping.
final class Latch: Sendable {
    private let state = Lock<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    init() {}

    func open() {
        let waiters = state.withLock { state in
            state.open = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Waits until opened, ignoring cancellation: models work that does not cooperate.
    func wait() async {
        await withCheckedContinuation { continuation in
            let isOpen = state.withLock { state in
                if !state.open { state.waiters.append(continuation) }
                return state.open
            }
            if isOpen { continuation.resume() }
        }
    }
}

/// Records things from many tasks, in the order they happened.
final class Recorder<Value: Sendable>: Sendable {
    private let values = Lock<[Value]>([])

    init() {}

    func append(_ value: Value) { values.withLock { $0.append(value) } }

    var all: [Value] { values.withLock { $0 } }
}

/// The tests' seeded generator: the library's, so a failing random test can be replayed.
typealias SeededGenerator = SplitMix64
