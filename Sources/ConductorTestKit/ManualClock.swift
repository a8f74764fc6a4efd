import Conductor
package import ConductorCore

/// A clock that moves only when a test tells it to.
///
/// Pass it wherever Conductor takes `some Clock<Duration>`; time then stands still until
/// you move it. Instead of sleeping to "let things happen", wait for the code under test to
/// start sleeping with ``sleepers(atLeast:)``, then move time once:
///
/// ```swift
/// let clock = ManualClock()
/// let harmonizer = try Harmonizer(count: 1, timeout: .seconds(2), clock: clock)
/// await clock.sleepers(atLeast: 1)   // the timeout is armed
/// clock.advance(by: .seconds(2))     // and now it fires
/// ```
///
/// To let time run while a whole scenario plays out, drive it with
/// ``advance(by:until:maxSteps:isolation:)`` instead of writing a loop:
///
/// ```swift
/// let done = try await clock.advance(by: .milliseconds(10), until: { ledger.endedCount == 100 }, maxSteps: 10_000)
/// #expect(done)
/// ```
///
/// Conductor tags its own sleeps with a ``SleepPurpose`` — a task's timeout, a retry's
/// backoff, a harmonizer's timeout — so a test can wait for the sleep it means and tell it
/// apart from the others:
///
/// ```swift
/// await clock.sleepers(atLeast: 1, for: .retryBackoff)   // the first attempt failed
/// clock.advance(by: .seconds(1))                          // and the second starts
/// ```
///
/// A sleeper whose task is cancelled throws `CancellationError` at once.
public final class ManualClock: Clock, Sendable {
    /// A point on a manual clock: the time since the clock was made.
    public struct Instant: InstantProtocol, CustomStringConvertible {
        public var offset: Duration

        public init(offset: Duration) { self.offset = offset }

        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
        public var description: String { offset.shortDescription }
    }

    private let state = Lock(ManualClockState())

    public init() {}

    public var now: Instant { state.withLock { $0.now } }

    public var minimumResolution: Duration { .zero }

    /// The earliest deadline a task sleeps until, if any sleeps: where a simulation moves
    /// time when nothing else can run.
    package var earliestDeadline: Instant? {
        state.withLock { $0.sleepers.values.map(\.deadline).min() }
    }

    /// How many tasks are sleeping on this clock now.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// How many tasks are sleeping on this clock now for `purpose`.
    public func sleeperCount(for purpose: SleepPurpose) -> Int {
        state.withLock { $0.count(for: purpose.tag) }
    }

    /// Why each task sleeping on this clock now sleeps, earliest deadline first.
    public var sleeperPurposes: [SleepPurpose] {
        state.withLock { state in
            state.sleepers.values.sorted { $0.deadline < $1.deadline }.map { SleepPurpose($0.purpose) }
        }
    }

    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try await sleep(until: deadline, tag: .unspecified)
    }

    private func sleep(until deadline: Instant, tag: ConductorCore.SleepPurpose) async throws {
        try Task.checkCancellation()
        // Set once the sleep is registered: a driver waiting for woken sleepers to run learns
        // when this one has, whichever way its sleep ended.
        var registered: UInt64?
        let woke = await state.suspend(
            { (state: inout ManualClockState, sleeper: WaiterSet<Bool>.Waiter) in
                let decision = state.sleep(sleeper, until: deadline, tag)
                if case .wait = decision { registered = sleeper.id }
                return decision
            },
            cancelledNow: { _ in (false, []) },
            perform: { ready in ready.resumeAll() },
            cancelled: { @Sendable state, id in
                guard let (sleeper, ready) = state.cancelSleeper(id) else { return nil }
                return {
                    sleeper.resume(returning: false)
                    ready.resumeAll()
                }
            })
        if let registered { state.withLock { $0.sleeperResumed(registered) }.resumeAll() }
        if !woke { throw CancellationError() }
    }

    /// Moves time forward and wakes, in deadline order, every sleeper whose deadline has come.
    public func advance(by duration: Duration) {
        advance(to: state.withLock { $0.now }.advanced(by: duration))
    }

    /// Moves time to `instant` (never backwards) and wakes every sleeper whose deadline has come.
    public func advance(to instant: Instant) {
        state.withLock { $0.advance(to: instant) }.resumeAll()
    }

    /// Suspends until at least `count` tasks are sleeping on this clock: the event a test
    /// waits for before it advances time, so it never races the code under test. Returns at
    /// once when the count is already met, and early if the waiting task is cancelled.
    public func sleepers(atLeast count: Int) async {
        await sleepers(atLeast: count, tag: nil)
    }

    /// Suspends until at least `count` tasks are sleeping on this clock for `purpose` — the
    /// library's own sleeps carry theirs, so a test can wait for, say, a retry's backoff while
    /// a timeout also sleeps. Returns at once when the count is already met, and early if the
    /// waiting task is cancelled.
    public func sleepers(atLeast count: Int, for purpose: SleepPurpose) async {
        await sleepers(atLeast: count, tag: purpose.tag)
    }

    private func sleepers(atLeast count: Int, tag: ConductorCore.SleepPurpose?) async {
        await state.wait(untilCountOf: { $0.count(for: tag) }, reaches: count, key: tag, waiters: \.countWaiters)
    }

    /// Lets time run, one step at a time, until `condition` holds: the loop a test would
    /// otherwise write around ``sleepers(atLeast:)`` and ``advance(by:)``, written once so
    /// that it cannot starve the work it waits for.
    ///
    /// Before each step the driver *suspends*: until every sleeper the last step woke has
    /// resumed running, then once more so the work those sleepers go on with gets a thread,
    /// and — when nobody sleeps on the clock — until a task starts sleeping or
    /// ``stateChanged()`` is called. It never spins on a condition that is already met, so a
    /// driver on a busy two-thread pool leaves the threads to the code under test, and
    /// cancelling the driving task (a test's time limit, say) ends it.
    ///
    /// Call ``stateChanged()`` where `condition` can become true without anyone sleeping on
    /// the clock, typically at the end of the scenario the test drives:
    ///
    /// ```swift
    /// import Synchronization
    ///
    /// let finished = Atomic(false)
    /// let scenario = Task {
    ///     await runScenario(clock: clock)
    ///     finished.store(true, ordering: .releasing)
    ///     clock.stateChanged()
    /// }
    /// let done = try await clock.advance(by: .milliseconds(50), until: { finished.load(ordering: .acquiring) })
    /// #expect(done)
    /// ```
    ///
    /// - Parameters:
    ///   - step: how far time moves in one step.
    ///   - condition: checked between steps, on the caller's isolation, never under the
    ///     clock's lock.
    ///   - maxSteps: the most steps taken before giving up.
    ///   - isolation: where `condition` runs: the caller's isolation, by default.
    /// - Returns: whether `condition` held; `false` when `maxSteps` steps did not make it hold.
    /// - Throws: `CancellationError` when the driving task is cancelled.
    @discardableResult
    public func advance(
        by step: Duration,
        until condition: () -> Bool,
        maxSteps: Int = 100_000,
        isolation: isolated (any Actor)? = #isolation
    ) async throws -> Bool {
        try await advance(until: condition, maxSteps: maxSteps, step: { step })
    }

    /// Lets time run until `condition` holds, as ``advance(by:until:maxSteps:isolation:)``
    /// does, with each step's length drawn from `step` (for example from a seeded generator).
    @discardableResult
    public func advance(
        until condition: () -> Bool,
        maxSteps: Int = 100_000,
        isolation: isolated (any Actor)? = #isolation,
        step: () -> Duration
    ) async throws -> Bool {
        for _ in 0..<max(maxSteps, 0) {
            try await wokenSleepersResumed()
            // Their next job (the rest of the body the sleep interrupted) was enqueued as
            // they resumed: let it go ahead of the next step.
            await Task.yield()
            // Read before the condition, so a change made after the check is not missed.
            let changesSeen = state.withLock { $0.changes }
            if condition() { return true }
            if try await sleeperOrChange(since: changesSeen) == .changed, condition() { return true }
            let length = step()
            state.withLock { $0.advance(to: $0.now.advanced(by: length)) }.resumeAll()
        }
        return condition()
    }

    /// Tells a driver in ``advance(by:until:maxSteps:isolation:)`` to look at its condition
    /// again. Call it where the condition changes without anyone starting to sleep on this
    /// clock — typically where the scenario the test drives has finished.
    public func stateChanged() {
        state.withLock { $0.noteChange() }.resumeAll()
    }

    /// Suspends until every sleeper woken by an advance has resumed running.
    private func wokenSleepersResumed() async throws {
        try await waitAsDriver(for: .wokenResumed)
    }

    /// Suspends until someone sleeps on the clock or something changed since `changesSeen`.
    private func sleeperOrChange(since changesSeen: UInt64) async throws -> ManualClockState.DriverWake {
        try await waitAsDriver(for: .sleeperOrChange(since: changesSeen))
        return state.withLock { $0.sleepers.isEmpty ? .changed : .sleeping }
    }

    private func waitAsDriver(for condition: ManualClockState.DriverCondition) async throws {
        await state.suspend(
            { (state: inout ManualClockState, driver: WaiterSet<Void>.Waiter) -> SuspensionDecision<Void, Void> in
                if state.holds(condition) { return .resume((), ()) }
                state.driverWaiters.append(.init(condition: condition, waiter: driver))
                return .wait(())
            },
            cancelledNow: { _ in ((), ()) },
            cancelled: { @Sendable state, id in
                guard let driver = state.removeDriverWaiter(id) else { return nil }
                return { driver.resume(returning: ()) }
            })
        try Task.checkCancellation()
    }
}

extension ManualClock: SleepPurposeAwareClock {
    package func sleep(until deadline: Instant, purpose: ConductorCore.SleepPurpose) async throws {
        try await sleep(until: deadline, tag: purpose)
    }
}

extension ManualClock {
    /// Why a task sleeps on a ``ManualClock``: Conductor tags each of its own sleeps with one;
    /// any other sleep is ``unspecified``.
    public struct SleepPurpose: Hashable, Sendable, CustomStringConvertible {
        let tag: ConductorCore.SleepPurpose

        init(_ tag: ConductorCore.SleepPurpose) { self.tag = tag }

        /// A sleep that gave no purpose: the test's or the user's own code sleeping on the clock.
        public static let unspecified = SleepPurpose(.unspecified)
        /// A graph run's (or a launcher's tasks') timer for the timeouts of task attempts.
        public static let taskTimeout = SleepPurpose(.taskTimeout)
        /// The pause before a graph task's next attempt (`retry:` with a delay).
        public static let retryBackoff = SleepPurpose(.retryBackoff)
        /// A `Harmonizer`'s or a `HarmonizerRegistry`'s timeout.
        public static let harmonizerTimeout = SleepPurpose(.harmonizerTimeout)
        /// A `Launcher`'s readiness deadlines, from `ready(_:timeout:)`.
        public static let launchReadyTimeout = SleepPurpose(.launchReadyTimeout)
        /// A `Launcher`'s deadline for each task's undo, from `shutdown()`.
        public static let launchUndoTimeout = SleepPurpose(.launchUndoTimeout)
        /// A `RequestGate`'s timer for its requests' timeouts: one sleeper however many
        /// requests have a deadline.
        public static let requestTimeout = SleepPurpose(.requestTimeout)
        /// A `RequestGate`'s timer for the running refresh's deadline.
        public static let refreshTimeout = SleepPurpose(.refreshTimeout)
        /// The pause before a `RequestGate` request's next attempt (backoff or `Retry-After`).
        public static let gateBackoff = SleepPurpose(.gateBackoff)

        public var description: String { tag.name }
    }
}

extension Array where Element == WaiterSet<Void>.Continuation {
    fileprivate func resumeAll() {
        for continuation in self { continuation.resume() }
    }
}

extension Array where Element == WaiterSet<Bool>.Waiter {
    /// Wakes sleepers whose deadline came.
    fileprivate func resumeAll() {
        for sleeper in self { sleeper.resume(returning: true) }
    }
}

/// The clock's state, changed only under its lock; each operation returns the continuations
/// to resume once the lock is released. Sleepers and drivers wait through `Lock.suspend`, which
/// handles their race with cancellation.
private struct ManualClockState {
    /// A continuation of a count waiter or a driver, resumed with nothing.
    typealias Ready = WaiterSet<Void>.Continuation

    struct Sleeper {
        var deadline: ManualClock.Instant
        var purpose: SleepPurpose
        /// Resumed with `true` when its deadline comes, `false` when its task is cancelled.
        var waiter: WaiterSet<Bool>.Waiter
    }

    /// What a driver waits for between steps.
    enum DriverCondition {
        case wokenResumed
        case sleeperOrChange(since: UInt64)
    }

    enum DriverWake { case sleeping, changed }

    struct DriverWaiter {
        var condition: DriverCondition
        var waiter: WaiterSet<Void>.Waiter
    }

    var now = ManualClock.Instant(offset: .zero)
    var sleepers: [UInt64: Sleeper] = [:]
    /// Sleepers a step woke that have not run yet: a driver waits for them before stepping again.
    var wokenNotResumed: Set<UInt64> = []
    /// Counts sleeps begun, sleeps cancelled and ``ManualClock/stateChanged()`` calls.
    var changes: UInt64 = 0
    /// Waiters of ``ManualClock/sleepers(atLeast:)``, keyed by the purpose they count (`nil`
    /// counts every sleeper).
    var countWaiters = CountWaiters<SleepPurpose?>()
    var driverWaiters: [DriverWaiter] = []

    /// How many sleep for `tag`, or in all when `tag` is `nil`.
    func count(for tag: SleepPurpose?) -> Int {
        Self.count(in: sleepers, for: tag)
    }

    /// Reads only `sleepers`, so a mutating method can count while it changes `countWaiters`.
    static func count(in sleepers: [UInt64: Sleeper], for tag: SleepPurpose?) -> Int {
        guard let tag else { return sleepers.count }
        return sleepers.values.count { $0.purpose == tag }
    }

    /// Registers `sleeper` until `deadline`, or lets it go on at once if the deadline has come;
    /// either way, what its sleeping lets go is resumed once the lock is released.
    mutating func sleep(
        _ sleeper: WaiterSet<Bool>.Waiter, until deadline: ManualClock.Instant, _ purpose: SleepPurpose
    ) -> SuspensionDecision<Bool, [Ready]> {
        if deadline <= now { return .resume(true, []) }
        sleepers[sleeper.id] = Sleeper(deadline: deadline, purpose: purpose, waiter: sleeper)
        changes += 1
        let satisfied = countWaiters.takeSatisfied { [sleepers] in Self.count(in: sleepers, for: $0) }
        return .wait(satisfied + takeReadyDrivers())
    }

    /// Takes out sleeper `id` (its task was cancelled), with the drivers that lets go; `nil`
    /// when a step has woken it already.
    mutating func cancelSleeper(_ id: UInt64) -> (WaiterSet<Bool>.Waiter, [Ready])? {
        guard let sleeper = sleepers.removeValue(forKey: id) else { return nil }
        changes += 1
        return (sleeper.waiter, takeReadyDrivers())
    }

    mutating func sleeperResumed(_ id: UInt64) -> [Ready] {
        guard wokenNotResumed.remove(id) != nil else { return [] }
        return takeReadyDrivers()
    }

    /// Moves to `instant` and hands back the due sleepers, earliest first.
    mutating func advance(to instant: ManualClock.Instant) -> [WaiterSet<Bool>.Waiter] {
        if instant > now { now = instant }
        // Ties go in the order the sleeps began (their ids), not the dictionary's, whose
        // order changes from process to process: a simulation replays a seed exactly.
        let due = sleepers.filter { $0.value.deadline <= now }.sorted {
            ($0.value.deadline.offset, $0.key) < ($1.value.deadline.offset, $1.key)
        }
        for (id, _) in due {
            sleepers[id] = nil
            wokenNotResumed.insert(id)
        }
        return due.map(\.value.waiter)
    }

    mutating func noteChange() -> [Ready] {
        changes += 1
        return takeReadyDrivers()
    }

    func holds(_ condition: DriverCondition) -> Bool {
        switch condition {
        case .wokenResumed: wokenNotResumed.isEmpty
        case .sleeperOrChange(let since): !sleepers.isEmpty || changes > since
        }
    }

    mutating func takeReadyDrivers() -> [Ready] {
        let ready = driverWaiters.filter { holds($0.condition) }
        guard !ready.isEmpty else { return [] }
        driverWaiters.removeAll { driver in ready.contains { $0.waiter.id == driver.waiter.id } }
        return ready.map(\.waiter.continuation)
    }

    mutating func removeDriverWaiter(_ id: UInt64) -> WaiterSet<Void>.Waiter? {
        guard let index = driverWaiters.firstIndex(where: { $0.waiter.id == id }) else { return nil }
        return driverWaiters.remove(at: index).waiter
    }
}
