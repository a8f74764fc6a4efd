/// A value behind a lock whose changes can be waited for: the offline-order story waits on what
/// it can observe — the server's count of refused orders, the app's lines — never on a sleep.
///
/// ```swift
/// let counts = Watched(0)
/// Task { counts.update { $0 += 1 } }
/// let seen = try await counts.first(where: { $0 >= 1 }, within: .seconds(5), waitingFor: "a count")
/// ```
final class Watched<Value: Sendable>: Sendable {
    private struct State {
        var value: Value
        var watchers: [Int: AsyncStream<Void>.Continuation] = [:]
        var nextWatcher = 0
    }

    private let state: Guarded<State>

    init(_ value: Value) { state = Guarded(State(value: value)) }

    var value: Value { state.withLock { $0.value } }

    /// Changes the value and wakes every waiter, which reads it again.
    @discardableResult
    func update<Result>(_ body: (inout Value) -> Result) -> Result {
        let (result, watchers) = state.withLock { state in
            (body(&state.value), Array(state.watchers.values))
        }
        // A wake-up carries no value: a waiter reads the latest under the lock, so two updates
        // racing cannot hand it an older value after a newer one.
        for watcher in watchers { watcher.yield() }
        return result
    }

    /// The first value, the current one included, that satisfies `condition`; `nil` if the
    /// waiting task is cancelled first.
    func first(where condition: @Sendable (Value) -> Bool) async -> Value? {
        let (changes, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = state.withLock { state in
            state.nextWatcher += 1
            state.watchers[state.nextWatcher] = continuation
            return state.nextWatcher
        }
        defer {
            _ = state.withLock { $0.watchers.removeValue(forKey: id) }
            continuation.finish()
        }
        // Registered before the first read, so no change between the read and the wait is missed.
        var value = self.value
        if condition(value) { return value }
        for await _ in changes {
            value = self.value
            if condition(value) { return value }
        }
        return nil
    }

    /// ``first(where:)``, bounded: throws a ``DemoFailure`` naming `what` when no value satisfies
    /// `condition` within `limit` on `clock`, so a story that goes wrong ends instead of hanging.
    func first(
        where condition: @escaping @Sendable (Value) -> Bool, within limit: Duration,
        clock: some Clock<Duration> = ContinuousClock(), waitingFor what: String
    ) async throws -> Value {
        try await withThrowingTaskGroup(of: Value?.self) { group in
            group.addTask { await self.first(where: condition) }
            group.addTask {
                try await clock.sleep(for: limit)
                throw DemoFailure("waited \(limit.shortDescription) for \(what), in vain")
            }
            defer { group.cancelAll() }
            guard let value = try await group.next() ?? nil else { throw CancellationError() }
            return value
        }
    }
}
