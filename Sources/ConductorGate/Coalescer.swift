import Synchronization

/// Runs work once per key while it is in flight and hands its result to every caller that
/// asked meanwhile.
///
/// The work runs in its own task, so no caller owns it: cancelling one caller returns that
/// caller at once and leaves the others waiting; when the last caller leaves, the work is
/// cancelled and the key is free for a fresh start. Each flight ends exactly once, through
/// its `OnceCell`; `onSettle` runs for the outcome that won.
///
/// Generic over its key so that a user of one concrete key type (the gate's) hashes and
/// compares it directly: an `AnyHashable` key costs dynamic casts on every lookup. A key must
/// tell apart flights whose results have different types (``ErasedCoalescingKey`` does).
final class Coalescer<Key: Hashable & Sendable>: Sendable {
    fileprivate struct Flight: Sendable {
        var token: UInt64
        var subscribers: Int
        var priority: FlightPriority
        /// An `OnceCell<Result<T, any Error>>` for the `T` the key implies.
        var cell: any Sendable
        var task: Task<Void, Never>?
        /// Ends the flight with an error, if nothing ended it yet.
        var abandon: @Sendable (any Error) -> Void
        /// Claimed by whichever ends the flight first: its work, or `abandon`.
        var settled: OnceFlag
    }

    struct State {
        fileprivate var flights: [Key: Flight] = [:]
        var nextToken: UInt64 = 0
        var shutdownError: (any Error)?
        /// Test hook's waiters (Coalescer+Testing.swift): empty until a test waits.
        var probeWaiters = CountWaiters<Void>()

        var subscriberCount: Int { flights.values.reduce(0) { $0 + $1.subscribers } }

        /// The test hook's waiters that the subscriber count now satisfies.
        mutating func takeSatisfiedProbeWaiters() -> [CountWaiters<Void>.Continuation] {
            // Counting walks every flight: only when a test waits.
            guard !probeWaiters.isEmpty else { return [] }
            return probeWaiters.takeSatisfied(by: subscriberCount)
        }
    }

    let state = Lock(State())

    init() {}

    /// Joins the flight for `key`, starting it with `work` when there is none.
    ///
    /// - Parameters:
    ///   - priority: this caller's priority; a flight starts with its first caller's.
    ///   - joined: called, outside the lock, when this caller joined a flight someone else
    ///     started, with that flight's priority (to raise it).
    ///   - cancelled: the error a cancelled caller throws.
    func run<T: Sendable>(
        key: Key,
        priority: PriorityScheduler.Priority,
        cancelled: () -> any Error,
        joined: @Sendable (FlightPriority) -> Void = { _ in },
        onSettle: @escaping @Sendable (Result<T, any Error>) -> Void = { _ in },
        work: @escaping @Sendable (FlightPriority) async throws -> T
    ) async throws -> T {
        typealias Cell = OnceCell<Result<T, any Error>>
        let subscription:
            (
                cell: Cell, token: UInt64, priority: FlightPriority, isNew: Bool,
                settled: OnceFlag, ready: [CountWaiters<Void>.Continuation]
            ) =
                try state.withLock { state in
                    if let error = state.shutdownError { throw error }
                    // A key names its result type (``ErasedCoalescingKey``), so a flight of an
                    // equal key always holds a cell of this type; were it ever not so, this
                    // caller starts a flight of its own rather than crash.
                    if var flight = state.flights[key], let cell = flight.cell as? Cell {
                        flight.subscribers += 1
                        state.flights[key] = flight
                        return (
                            cell, flight.token, flight.priority, false, flight.settled,
                            state.takeSatisfiedProbeWaiters()
                        )
                    }
                    let flightPriority = FlightPriority(priority)
                    let cell = Cell()
                    // The settle hook (the gate's final event) runs before any caller is woken,
                    // so a caller that has returned has its ending in the journal.
                    let settled = OnceFlag()
                    let token = state.nextToken
                    state.nextToken += 1
                    state.flights[key] = Flight(
                        token: token,
                        subscribers: 1,
                        priority: flightPriority,
                        cell: cell,
                        task: nil,
                        abandon: { error in
                            guard settled.claim() else { return }
                            onSettle(.failure(error))
                            cell.resolve(.failure(error))
                        },
                        settled: settled
                    )
                    return (cell, token, flightPriority, true, settled, state.takeSatisfiedProbeWaiters())
                }
        for waiter in subscription.ready { waiter.resume() }
        let (cell, token, flightPriority, isNew, _, _) = subscription
        if isNew {
            let task = Task(executorPreference: TaskPlacement.executor) {
                let result: Result<T, any Error>
                do { result = .success(try await work(flightPriority)) } catch { result = .failure(error) }
                self.remove(key, token: token)
                guard subscription.settled.claim() else { return }
                onSettle(result)
                cell.resolve(result)
            }
            let stored = state.withLock { state -> Bool in
                guard var flight = state.flights[key], flight.token == token else { return false }
                flight.task = task
                state.flights[key] = flight
                return true
            }
            // Every caller left (or shutdown came) before the task was recorded.
            if !stored { task.cancel() }
        } else {
            joined(flightPriority)
        }
        if let result = await cell.wait() { return try result.get() }
        if !leave(key, token: token) {
            // The flight was already being settled (its work finished, or a shutdown took it)
            // when this caller was cancelled. Settling is synchronous and runs `onSettle`
            // before resolving the cell, so waiting for the cell is short. The caller gets the
            // outcome `onSettle` recorded — a response that won the race is the caller's too —
            // so what the caller sees and what the flight's ending says never differ.
            return try await cell.waitIgnoringCancellation().get()
        }
        throw cancelled()
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

    /// Returns `false` when the flight was no longer registered (it is being settled).
    @discardableResult
    private func leave(_ key: Key, token: UInt64) -> Bool {
        let (found, abandoned) = state.withLock { state -> (Bool, Flight?) in
            guard var flight = state.flights[key], flight.token == token else { return (false, nil) }
            flight.subscribers -= 1
            if flight.subscribers > 0 {
                state.flights[key] = flight
                return (true, nil)
            }
            state.flights[key] = nil
            return (true, flight)
        }
        guard let abandoned else { return found }
        abandoned.task?.cancel()
        abandoned.abandon(CancellationError())
        return true
    }
}

/// A coalescing key of any type, and the type of the result its flight produces: flights
/// with equal keys but different result types are different flights.
struct ErasedCoalescingKey: Hashable, Sendable {
    private var base: any Hashable & Sendable
    private var result: ObjectIdentifier

    init<Result>(_ key: some Hashable & Sendable, result: Result.Type) {
        base = key
        self.result = ObjectIdentifier(result)
    }

    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.result == rhs.result && AnyHashable(lhs.base) == AnyHashable(rhs.base)
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(result)
        hasher.combine(AnyHashable(base))
    }
}
