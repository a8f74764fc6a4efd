import Synchronization

/// Harmonizers found by name, so modules that share no objects can meet at one rendezvous.
///
/// Create a harmonizer under a name with a completion; any module then counts it down,
/// stashes into it or cancels it by that name. At zero the completion runs (on the main
/// actor unless told otherwise) with everything stashed, and the name is free again:
///
/// ```swift
/// try HarmonizerRegistry.shared.create("sing-along", count: 4, timeout: .seconds(2)) { outcome in
///     MainActor.assumeIsolated {
///         if case .completed(let stash) = outcome { screen.raiseCurtain(stash) } else { screen.close() }
///     }
/// }
/// // In the download module:
/// HarmonizerRegistry.shared.stash(url, as: "original-song", in: "sing-along")
/// HarmonizerRegistry.shared.countDown("sing-along")
/// // When the child leaves the page:
/// HarmonizerRegistry.shared.cancel("sing-along")
/// ```
///
/// Every operation is safe from any thread or task. One on a name that is not waiting
/// (never created, already finished or cancelled) returns `false` and changes nothing; so
/// does an extra count-down. Report those with ``onMisuse(on:_:)``. Create your own registry
/// for tests (with a `ManualClock`) or to keep a module's names apart.
///
/// - Complexity: a name lookup is one short locked dictionary access; the
///   operation on the harmonizer found costs what it costs on ``Harmonizer``.
public final class HarmonizerRegistry: Sendable {
    /// The registry every module can reach.
    public static let shared = HarmonizerRegistry()

    private struct MisuseHandler: Sendable {
        var target: CallbackTarget
        var handler: @Sendable (HarmonizerError) -> Void
    }

    private struct State {
        private var entries: [String: Harmonizer] = [:]
        /// The entry found last: a module counting one name down many times compares the name
        /// (for a short name, two machine words) instead of hashing it every time.
        private var recent: (name: String, harmonizer: Harmonizer)?
        var misuseHandler: MisuseHandler?

        mutating func entry(_ name: String) -> Harmonizer? {
            if let recent, recent.name == name { return recent.harmonizer }
            guard let harmonizer = entries[name] else { return nil }
            recent = (name, harmonizer)
            return harmonizer
        }

        subscript(name: String) -> Harmonizer? {
            get { entries[name] }
            set {
                if recent?.name == name { recent = nil }
                entries[name] = newValue
            }
        }
    }

    private let state = Lock(State())
    private let clock: ClockSource

    /// A registry whose timeouts run on `clock`.
    public init(clock: some Clock<Duration> = ContinuousClock()) {
        self.clock = ClockSource(clock)
    }

    // MARK: - Creating

    /// Creates the harmonizer `name`, which completes after `count` count-downs (more if
    /// others count up meanwhile) or times out after `timeout` (`nil`: never).
    ///
    /// `completion` runs once on `target` with ``Harmonizer/Outcome/completed(_:)`` or
    /// ``Harmonizer/Outcome/timedOut(_:missing:)``; a cancelled harmonizer drops it uncalled.
    /// By then the name has been removed, so the completion may create it again.
    /// Throws ``HarmonizerError`` if `name` is empty or still waiting, or `count` or `timeout` is negative.
    @discardableResult
    public func create(
        _ name: String,
        count: Int,
        timeout: Duration? = nil,
        on target: CallbackTarget = .mainActor,
        completion: @escaping @Sendable (Harmonizer.Outcome) -> Void
    ) throws(HarmonizerError) -> Harmonizer {
        try register(name, count: count, participants: [], timeout: timeout, target: target, completion: completion)
    }

    /// Creates the harmonizer `name`, which completes when every named participant has
    /// counted down, or times out after `timeout` (`nil`: never) naming those that have not.
    ///
    /// See ``create(_:count:timeout:on:completion:)`` for the completion and the errors.
    @discardableResult
    public func create(
        _ name: String,
        participants: [String],
        timeout: Duration? = nil,
        on target: CallbackTarget = .mainActor,
        completion: @escaping @Sendable (Harmonizer.Outcome) -> Void
    ) throws(HarmonizerError) -> Harmonizer {
        try register(
            name,
            count: 0,
            participants: participants,
            timeout: timeout,
            target: target,
            completion: completion
        )
    }

    private func register(
        _ name: String,
        count: Int,
        participants: [String],
        timeout: Duration?,
        target: CallbackTarget,
        completion: @escaping @Sendable (Harmonizer.Outcome) -> Void
    ) throws(HarmonizerError) -> Harmonizer {
        guard !name.isEmpty else { throw .emptyName() }
        let harmonizer = try Harmonizer(
            name: name,
            count: count,
            participants: participants,
            timeout: timeout,
            clock: clock
        )
        let id = ObjectIdentifier(harmonizer)
        // Immediate, so the name is free before the count-down that completed it returns.
        harmonizer.onOutcome(on: .immediate) { [weak self] outcome in
            self?.remove(name, id)
            if case .cancelled = outcome { return }
            target.dispatch { completion(outcome) }
        }
        try state.withLock { state throws(HarmonizerError) in
            if let existing = state[name], !existing.isFinished { throw .duplicateName(name) }
            state[name] = harmonizer
        }
        // Armed only once registered, so a zero timeout cannot fire before the name exists.
        harmonizer.armTimeout()
        return harmonizer
    }

    private func remove(_ name: String, _ id: ObjectIdentifier) {
        state.withLock { state in
            guard let entry = state[name], ObjectIdentifier(entry) == id else { return }
            state[name] = nil
        }
    }

    // MARK: - Using

    /// The harmonizer waiting under `name`, to await its ``Harmonizer/outcome`` or observe its events.
    public func harmonizer(named name: String) -> Harmonizer? {
        state.withLock { $0.entry(name) }
    }

    /// Counts `name` up, remembering `participant` if given. Returns whether it counted.
    @discardableResult
    public func countUp(_ name: String, participant: String? = nil) -> Bool {
        guard let harmonizer = harmonizer(named: name) else {
            report(.unknownName(name, operation: "countUp"))
            return false
        }
        let counted = participant.map { harmonizer.arrive($0) } ?? harmonizer.arrive()
        if !counted { report(.unknownName(name, operation: "countUp")) }
        return counted
    }

    /// Counts `name` down (as `participant`, if given); at zero its completion runs and the
    /// name is removed. Returns whether it counted: an extra or late count-down, or one for
    /// an unknown name, returns `false` and is reported to ``onMisuse(on:_:)``.
    @discardableResult
    public func countDown(_ name: String, participant: String? = nil) -> Bool {
        guard let harmonizer = harmonizer(named: name) else {
            report(.unknownName(name, operation: "countDown"))
            return false
        }
        switch harmonizer.countDown(participant: participant) {
        case .counted, .completed:
            return true
        case .counterAtZero:
            report(.extraCountDown(name))
        case .finished:
            report(.unknownName(name, operation: "countDown"))
        case .participantAbsent:
            report(.absentParticipant(participant ?? "", in: name))
        }
        return false
    }

    /// Keeps `value` under `key` for `name`'s completion. Returns whether it was kept.
    @discardableResult
    public func stash(_ value: some Sendable, as key: String, in name: String) -> Bool {
        guard let harmonizer = harmonizer(named: name), harmonizer.stash(value, as: key) else {
            report(.unknownName(name, operation: "stash"))
            return false
        }
        return true
    }

    /// Keeps `value` under a typed `key` for `name`'s completion. Returns whether it was kept.
    @discardableResult
    public func stash<Value>(_ value: Value, as key: HarmonizerKey<Value>, in name: String) -> Bool {
        stash(value, as: key.name, in: name)
    }

    /// Cancels `name`: its completion is dropped uncalled, its stash released, its waiters
    /// told ``Harmonizer/Outcome/cancelled``, and the name freed. Cancelling a name that is
    /// not waiting does nothing and returns `false`.
    @discardableResult
    public func cancel(_ name: String) -> Bool {
        harmonizer(named: name)?.cancel() ?? false
    }

    /// The current count of `name`; zero when no harmonizer of that name is waiting.
    public func count(_ name: String) -> Int {
        harmonizer(named: name)?.count ?? 0
    }

    /// Calls `handler` on `target` whenever an operation is ignored — an extra or late
    /// count-down, or a name that is not waiting — instead of crashing. Replaces any earlier handler.
    public func onMisuse(
        on target: CallbackTarget = .immediate,
        _ handler: @escaping @Sendable (HarmonizerError) -> Void
    ) {
        state.withLock { $0.misuseHandler = MisuseHandler(target: target, handler: handler) }
    }

    private func report(_ error: HarmonizerError) {
        guard let misuse = state.withLock({ $0.misuseHandler }) else { return }
        misuse.target.dispatch { misuse.handler(error) }
    }
}
