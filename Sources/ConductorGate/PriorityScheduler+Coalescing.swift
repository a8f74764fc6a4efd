/// The scheduler's coalescing `run`: flights in a ``FlightTable`` under the scheduler's one
/// lock, beside the slots, so joining a flight and raising its queued slot are one transition.
///
/// A flight's work runs in a task of its own, so no caller owns it: a cancelled caller returns
/// at once and the others go on waiting; when the last caller leaves, the flight ends (the
/// key is free for a fresh start) and its work is cancelled. A flight leaves the table once,
/// so its outcome reaches exactly the callers still on it when it ends: a caller cancelled
/// after that gets the outcome too, so what it sees and what the flight did never differ.
extension PriorityScheduler {
    typealias Flights = FlightTable<ErasedCoalescingKey, WaiterSet<CoalescedDelivery>.Waiter, Task<Void, Never>?>

    /// What a caller of a coalesced flight is woken with.
    enum CoalescedDelivery: Sendable {
        /// The flight ended: its outcome, shared by every caller on it.
        case ended(Handoff<Result<any Sendable, any Error>>)
        /// This caller was cancelled before the flight ended.
        case cancelled
    }

    /// Joins the flight `key` names (raising it to `priority`), or opens one running `work`;
    /// returns the flight's result.
    func coalesce(
        _ key: ErasedCoalescingKey, priority: RequestPriority, work: @escaping @Sendable () async throws -> any Sendable
    ) async throws -> any Sendable {
        let id = WaiterID.next()
        typealias Caller = WaiterSet<CoalescedDelivery>.Waiter
        typealias Joined = (opened: Bool, ready: [CountWaiters<Void>.Continuation])
        let delivery = await state.suspend(
            { (state: inout State, caller: Caller) -> SuspensionDecision<CoalescedDelivery, Joined> in
                var joined: Joined = (false, [])
                switch state.flights.join(key, callerID: caller.id, caller: caller, priority: priority) {
                case .raised(let queued?, let target)?: joined.ready = state.raise(id: queued, to: target)
                case .raised(nil, _)?, .joined?: break
                case nil:
                    state.flights.open(
                        key, request: id, callerID: caller.id, caller: caller, priority: priority, work: nil)
                    joined.opened = true
                }
                if !state.callerWaiters.isEmpty {
                    joined.ready += state.callerWaiters.takeSatisfied(by: state.flights.callerCount)
                }
                return .wait(joined)
            },
            cancelledNow: { _ in (.cancelled, (false, [])) },
            perform: { joined in
                for waiter in joined.ready { waiter.resume() }
                if joined.opened { self.startFlight(key, id: id, priority: priority, work: work) }
            },
            cancelled: { @Sendable [self] state, callerID in leaveFlight(&state, key: key, caller: callerID) })
        switch delivery {
        case .ended(let outcome): return try outcome.value.get()
        case .cancelled: throw CancellationError()
        }
    }

    /// Runs flight `id`'s work in a task of its own, in a slot taken at the flight's priority,
    /// and settles the flight with its result.
    private func startFlight(
        _ key: ErasedCoalescingKey, id: UInt64, priority: RequestPriority,
        work: @escaping @Sendable () async throws -> any Sendable
    ) {
        let task = Task(executorPreference: TaskPlacement.executor) {
            let result: Result<any Sendable, any Error>
            do {
                let taken = try await self.acquire(priority, flight: (key, id))
                defer { self.release(taken) }
                result = .success(try await work())
            } catch {
                result = .failure(error)
            }
            let callers = self.state.withLock { $0.flights.end(key, request: id)?.callers.map(\.caller) } ?? []
            guard !callers.isEmpty else { return }
            let outcome = Handoff(result)
            for caller in callers { caller.resume(returning: .ended(outcome)) }
        }
        // Every caller left before the task was recorded: the flight ended, its work is cancelled.
        if !state.withLock({ $0.flights.attach(task, to: key, request: id) }) { task.cancel() }
    }

    /// A caller of flight `key` was cancelled: it leaves; the last caller to leave ends the
    /// flight and cancels its work. `nil` when the flight ended first (the caller then has its
    /// outcome).
    private func leaveFlight(
        _ state: inout State, key: ErasedCoalescingKey, caller: UInt64
    ) -> (@Sendable () -> Void)? {
        switch state.flights.leave(key, caller: caller) {
        case .gone: return nil
        case .left(let waiter): return { waiter.resume(returning: .cancelled) }
        case .ended(let waiter, let flight):
            let task = flight.work
            return {
                task?.cancel()
                waiter.resume(returning: .cancelled)
            }
        }
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
