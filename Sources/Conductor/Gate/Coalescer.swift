import Synchronization

/// Runs work once per key while it is in flight and hands its result to every caller that
/// asked meanwhile.
///
/// The work runs in its own task, so no caller owns it: cancelling one caller returns that
/// caller at once and leaves the others waiting; when the last caller leaves, the work is
/// cancelled and the key is free for a fresh start. Each flight ends exactly once, through
/// its `OnceCell`; `onSettle` runs for the outcome that won.
final class Coalescer: Sendable {
    private struct Key: Hashable, Sendable {
        var base: any Hashable & Sendable
        var type: ObjectIdentifier

        static func == (lhs: Key, rhs: Key) -> Bool {
            lhs.type == rhs.type && AnyHashable(lhs.base) == AnyHashable(rhs.base)
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(type)
            hasher.combine(AnyHashable(base))
        }
    }

    private struct Flight: Sendable {
        var token: UInt64
        var subscribers: Int
        var priority: FlightPriority
        /// An `OnceCell<Result<T, any Error>>` for the `T` named in the key.
        var cell: any Sendable
        var task: Task<Void, Never>?
        /// Ends the flight with an error, if nothing ended it yet.
        var abandon: @Sendable (any Error) -> Void
    }

    private struct State {
        var flights: [Key: Flight] = [:]
        var nextToken: UInt64 = 0
        var shutdownError: (any Error)?
        /// Test hook: callers waiting until so many callers are subscribed to flights.
        var subscriberWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

        var subscriberCount: Int { flights.values.reduce(0) { $0 + $1.subscribers } }

        mutating func takeSatisfiedWaiters() -> [CheckedContinuation<Void, Never>] {
            guard !subscriberWaiters.isEmpty else { return [] }
            let count = subscriberCount
            var ready: [CheckedContinuation<Void, Never>] = []
            subscriberWaiters.removeAll { waiter in
                guard count >= waiter.count else { return false }
                ready.append(waiter.continuation)
                return true
            }
            return ready
        }
    }

    private let state = Lock(State())

    init() {}

    /// Joins the flight for `key`, starting it with `work` when there is none.
    ///
    /// - Parameters:
    ///   - priority: this caller's priority; a flight starts with its first caller's.
    ///   - joined: called, outside the lock, when this caller joined a flight someone else
    ///     started, with that flight's priority (to raise it).
    ///   - cancelled: the error a cancelled caller throws.
    func run<T: Sendable>(
        key: any Hashable & Sendable,
        priority: PriorityScheduler.Priority,
        cancelled: @escaping @Sendable () -> any Error,
        joined: @Sendable (FlightPriority) -> Void = { _ in },
        onSettle: @escaping @Sendable (Result<T, any Error>) -> Void = { _ in },
        work: @escaping @Sendable (FlightPriority) async throws -> T
    ) async throws -> T {
        typealias Cell = OnceCell<Result<T, any Error>>
        let key = Key(base: key, type: ObjectIdentifier(T.self))
        let subscription:
            (
                cell: Cell, token: UInt64, priority: FlightPriority, created: Bool,
                ready: [CheckedContinuation<Void, Never>]
            ) =
                try state.withLock { state in
                    if let error = state.shutdownError { throw error }
                    if var flight = state.flights[key] {
                        flight.subscribers += 1
                        state.flights[key] = flight
                        return (
                            flight.cell as! Cell, flight.token, flight.priority, false, state.takeSatisfiedWaiters()
                        )
                    }
                    let flightPriority = FlightPriority(priority)
                    let cell = Cell()
                    let token = state.nextToken
                    state.nextToken += 1
                    state.flights[key] = Flight(
                        token: token,
                        subscribers: 1,
                        priority: flightPriority,
                        cell: cell,
                        task: nil,
                        abandon: { error in
                            if cell.resolve(.failure(error)) { onSettle(.failure(error)) }
                        }
                    )
                    return (cell, token, flightPriority, true, state.takeSatisfiedWaiters())
                }
        for waiter in subscription.ready { waiter.resume() }
        let (cell, token, flightPriority, created, _) = subscription
        if created {
            let task = Task {
                let result: Result<T, any Error>
                do { result = .success(try await work(flightPriority)) } catch { result = .failure(error) }
                self.remove(key, token: token)
                if cell.resolve(result) { onSettle(result) }
            }
            let stored = state.withLock { state -> Bool in
                guard state.flights[key]?.token == token else { return false }
                state.flights[key]!.task = task
                return true
            }
            // Every caller left (or shutdown came) before the task was recorded.
            if !stored { task.cancel() }
        } else {
            joined(flightPriority)
        }
        if let result = await cell.wait() { return try result.get() }
        leave(key, token: token)
        throw cancelled()
    }

    /// Test hook: suspends until at least `count` callers are subscribed to flights.
    func subscribers(atLeast count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if state.subscriberCount >= count { return true }
                state.subscriberWaiters.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Refuses new work and ends every flight with `error`, cancelling its work.
    func shutdown(with error: any Error) {
        let flights = state.withLock { state -> [Flight] in
            guard state.shutdownError == nil else { return [] }
            state.shutdownError = error
            defer { state.flights.removeAll() }
            return Array(state.flights.values)
        }
        for flight in flights {
            flight.task?.cancel()
            flight.abandon(error)
        }
    }

    private func remove(_ key: Key, token: UInt64) {
        state.withLock { state in
            if state.flights[key]?.token == token { state.flights[key] = nil }
        }
    }

    private func leave(_ key: Key, token: UInt64) {
        let abandoned = state.withLock { state -> Flight? in
            guard var flight = state.flights[key], flight.token == token else { return nil }
            flight.subscribers -= 1
            if flight.subscribers > 0 {
                state.flights[key] = flight
                return nil
            }
            state.flights[key] = nil
            return flight
        }
        guard let abandoned else { return }
        abandoned.task?.cancel()
        abandoned.abandon(CancellationError())
    }
}
