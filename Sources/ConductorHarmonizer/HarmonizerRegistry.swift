public import Logging
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
/// HarmonizerRegistry.shared.leave("sing-along")
/// // When the child leaves the page:
/// HarmonizerRegistry.shared.cancel("sing-along")
/// ```
///
/// Every operation is safe from any thread or task. One on a name that is not waiting
/// (never created, already finished or cancelled) returns `false` and changes nothing; so
/// does an extra count-down, and an anonymous one on a harmonizer of named participants.
/// Such misuse is logged as a warning, once per name; ``onMisuse(on:_:)`` hears every one
/// instead. Create your own registry for tests (with a `ManualClock`) or to keep a module's
/// names apart.
///
/// ``waitingNames`` says which harmonizers are still waiting — what a test checks after a
/// screen is dismissed, or what to log when one hangs:
///
/// ```swift
/// #expect(registry.waitingNames.isEmpty)
/// logger.warning("still waiting: \(registry.waitingNames)")  // ["sing-along"]
/// ```
///
/// Counting down by name is the convenience path. A participant that counts down often takes a
/// ``Participant`` handle once, whose ``Participant/leave()`` skips the lookup:
///
/// ```swift
/// let download = try registry.participant(of: "sing-along")
/// download.leave()
/// ```
///
/// - Complexity: looking up the name a thread looked up last, with no name added or removed
///   since, is one atomic load — no lock, no retain, no call; an anonymous ``leave(_:participant:)``
///   of it is then that and the counter's atomic subtract. Otherwise it is one short locked
///   dictionary access. The operation on the harmonizer found costs what it costs on
///   ``Harmonizer``. A ``Participant`` handle looks nothing up.
public final class HarmonizerRegistry: Sendable {
    /// The registry every module can reach.
    public static let shared = HarmonizerRegistry()

    /// The label of the logger misuse goes to when none is given.
    static let loggerLabel = "conductor.harmonizer"

    private let state = Lock(HarmonizerRegistryState())
    private let statePadding = CacheLinePadding()
    /// Changes, under the lock, whenever a name is added or removed; read without the lock by
    /// each thread's ``HarmonizerLookupCache`` to tell whether what it remembers still holds.
    private let stamp = Atomic<UInt64>(HarmonizerLookupCache.nextStamp())
    /// Read on every lookup: kept off the cache lines of the lock and of neighbouring objects.
    private let stampPadding = CacheLinePadding()
    /// Every harmonizer's timeout, on one timer task however many are waiting.
    private let timer: DeadlineTimer
    /// Counts every harmonizer's outcome, or `nil` when nothing records metrics.
    private let metrics: HarmonizerMetrics?
    /// Where misuse is logged; `nil`: a logger made when it is needed.
    private let logger: Logger?

    /// A registry whose timeouts run on `clock`.
    ///
    /// ```swift
    /// let registry = HarmonizerRegistry(clock: ManualClock(), logger: Logger(label: "app.harmonizers"))
    /// ```
    ///
    /// - Parameters:
    ///   - clock: Measures timeouts.
    ///   - telemetry: Counts each harmonizer's outcome (see <doc:Metrics>); by default with
    ///     whatever metrics factory the process bootstrapped, read now.
    ///   - logger: Where misuse is logged, as a warning, once per name, while no
    ///     ``onMisuse(on:_:)`` handler is installed. By default a logger labelled
    ///     `conductor.harmonizer`, made from the process's logging system when the first
    ///     misuse is logged (so bootstrapping logging after touching ``shared`` still counts).
    public init(
        clock: some Clock<Duration> = ContinuousClock(),
        telemetry: Telemetry = .bootstrapped,
        logger: Logger? = nil
    ) {
        self.timer = DeadlineTimer(clock: ClockSource(clock).purpose(.harmonizerTimeout))
        self.metrics = HarmonizerMetrics(telemetry)
        self.logger = logger
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
        try register(name, count: count, participants: nil, timeout: timeout, target: target, completion: completion)
    }

    /// Creates the harmonizer `name`, which completes when every named participant has
    /// counted down, or times out after `timeout` (`nil`: never) naming those that have not.
    ///
    /// Only count-downs and count-ups that name a participant count: one without a participant
    /// returns `false` and is reported as ``HarmonizerError/Code/anonymousParticipant``.
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
        participants: [String]?,
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
            timer: timer,
            metrics: metrics
        )
        let id = ObjectIdentifier(harmonizer)
        // Immediate, so the name is free before the count-down that completed it returns.
        harmonizer.onOutcome(on: .immediate) { [weak self] outcome in
            self?.remove(name, id)
            if case .cancelled = outcome { return }
            target.dispatch { completion(outcome) }
        }
        try state.withLock { state throws(HarmonizerError) in
            try state.register(name, harmonizer)
            stamp.store(HarmonizerLookupCache.nextStamp(), ordering: .releasing)
        }
        // Armed only once registered, so a zero timeout cannot fire before the name exists.
        harmonizer.armTimeout()
        return harmonizer
    }

    private func remove(_ name: String, _ id: ObjectIdentifier) {
        // The entry is released after unlocking: its stash may hold user objects.
        _ = state.withLock { state -> Harmonizer? in
            guard let entry = state.remove(name, id) else { return nil }
            stamp.store(HarmonizerLookupCache.nextStamp(), ordering: .releasing)
            return entry
        }
    }

    // MARK: - Using

    /// The harmonizer waiting under `name`, to await its ``Harmonizer/outcome`` or observe its events.
    public func harmonizer(named name: String) -> Harmonizer? {
        withHarmonizer(named: name) { $0 }
    }

    /// The names of the harmonizers still waiting, sorted: none has completed, timed out or
    /// been cancelled. After a screen is dismissed, a test expects its names gone:
    ///
    /// ```swift
    /// page.dismiss()
    /// #expect(!registry.waitingNames.contains("sing-along"))
    /// ```
    ///
    /// For one of them, ``Harmonizer/missingParticipants`` says whom it waits for:
    /// `registry.harmonizer(named: "sing-along")?.missingParticipants`.
    ///
    /// - Complexity: O(*n* log *n*) for *n* names, under the registry's lock: for tests and
    ///   diagnostics, not for a hot path.
    public var waitingNames: [String] {
        state.withLock { $0.waitingNames }
    }

    /// How many harmonizers are still waiting: `waitingNames.count`.
    public var waitingCount: Int {
        waitingNames.count
    }

    /// Runs `body` with the harmonizer waiting under `name`, or `nil`.
    ///
    /// The hot path: when this thread looked `name` up last and no name has been added or
    /// removed since, the harmonizer comes from the thread's own cache — no lock, no retain,
    /// one atomic load of the stamp. Otherwise the name is looked up under the lock and remembered.
    @inline(__always)
    private func withHarmonizer<Result>(named name: String, _ body: (Harmonizer?) -> Result) -> Result {
        let current = stamp.load(ordering: .acquiring)
        return HarmonizerLookupCache.current()._withUnsafeGuaranteedRef { cache in
            cache.withHarmonizer(name, stamp: current, body) {
                let (harmonizer, found) = state.withLock { state in
                    (state.entries[name], stamp.load(ordering: .relaxed))
                }
                cache.remember(name, harmonizer, stamp: found)
                return body(harmonizer)
            }
        }
    }

    /// Counts `name` up, remembering `participant` if given. Returns whether it counted.
    ///
    /// A harmonizer of named participants counts up only with a `participant`; without one,
    /// this returns `false` and reports ``HarmonizerError/Code/anonymousParticipant``.
    @discardableResult
    public func enter(_ name: String, participant: String? = nil) -> Bool {
        let error: HarmonizerError? = withHarmonizer(named: name) { harmonizer in
            guard let harmonizer else { return .unknownName(name, operation: "enter") }
            if participant == nil, harmonizer.waitsForNamedParticipants {
                return .anonymousParticipant(name, operation: "enter")
            }
            let counted = participant.map { harmonizer.enter($0) } ?? harmonizer.enter()
            return counted ? nil : .unknownName(name, operation: "enter")
        }
        guard let error else { return true }
        report(error)
        return false
    }

    /// Counts `name` down (as `participant`, if given); at zero its completion runs and the
    /// name is removed. Returns whether it counted: an extra or late count-down, one for an
    /// unknown name, or one without a participant on a harmonizer of named participants
    /// returns `false` and is reported (see ``onMisuse(on:_:)``).
    ///
    /// The convenience path: it looks `name` up each time. A participant that counts down
    /// often takes a ``Participant`` once with ``participant(of:)`` instead.
    @discardableResult
    public func leave(_ name: String, participant: String? = nil) -> Bool {
        // The common case on its own, with no call to make and so no register to save: an
        // anonymous count-down of the name this thread looked up last (the same string), no
        // name added or removed since, others still expected — the stamp, the thread's cache,
        // the name's bits and the counter's atomic subtract. Anything else takes the general path.
        if participant == nil, let cache = HarmonizerLookupCache.installed {
            let current = stamp.load(ordering: .acquiring)
            let remembered = cache._withUnsafeGuaranteedRef { $0.remembered(sameString: name, stamp: current) }
            if let remembered, let old = remembered._withUnsafeGuaranteedRef({ $0.subtractAnonymously() }) {
                if old > 1 { return true }
                return finishLeave(name, remembered, from: old)
            }
        }
        return leave(lookingUp: name, participant: participant)
    }

    /// An anonymous count-down by name whose subtract found `old` (at most 1): it may complete.
    @inline(never)
    private func finishLeave(_ name: String, _ remembered: Unmanaged<Harmonizer>, from old: Int) -> Bool {
        // Completing runs user code, which may make this thread's cache forget (and release)
        // the harmonizer: a strong reference of this call's own keeps it alive, taken first.
        let harmonizer = remembered.takeUnretainedValue()
        return reportUnlessCounted(harmonizer.leave(afterSubtractingFrom: old), name, participant: nil)
    }

    /// Any count-down by name: the name looked up (in this thread's cache or under the lock).
    @inline(never)
    private func leave(lookingUp name: String, participant: String?) -> Bool {
        let result = withHarmonizer(named: name) { $0?.tryLeave(participant: participant) }
        return reportUnlessCounted(result, name, participant: participant)
    }

    /// Whether a count-down by name counted; reports it when it did not.
    private func reportUnlessCounted(_ result: Harmonizer.LeaveResult?, _ name: String, participant: String?) -> Bool {
        switch result {
        case nil, .finished:
            report(.unknownName(name, operation: "leave"))
        case .counted, .completed:
            return true
        case .counterAtZero:
            report(.extraLeave(name))
        case .participantAbsent:
            report(.absentParticipant(participant ?? "", in: name))
        case .anonymous:
            report(.anonymousParticipant(name, operation: "leave"))
        }
        return false
    }

    /// Keeps `value` under `key` for `name`'s completion. Returns whether it was kept.
    @discardableResult
    public func stash(_ value: some Sendable, as key: String, in name: String) -> Bool {
        guard withHarmonizer(named: name, { $0?.stash(value, as: key) ?? false }) else {
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
        withHarmonizer(named: name) { $0?.cancel() ?? false }
    }

    /// The current count of `name`; zero when no harmonizer of that name is waiting.
    public func count(_ name: String) -> Int {
        withHarmonizer(named: name) { $0?.count ?? 0 }
    }

    /// Calls `handler` on `target` whenever an operation is ignored — an extra or late
    /// count-down, a name that is not waiting, an anonymous count on a harmonizer of named
    /// participants — instead of crashing. Replaces any earlier handler.
    ///
    /// The handler replaces the default log: from now on nothing is logged, and the handler
    /// hears every misuse, not only the first of each name. To keep a log line, log from it:
    ///
    /// ```swift
    /// registry.onMisuse { error in logger.warning("\(error.message)") }
    /// registry.onMisuse { _ in }  // silence
    /// ```
    public func onMisuse(
        on target: CallbackTarget = .immediate,
        _ handler: @escaping @Sendable (HarmonizerError) -> Void
    ) {
        let handler = HarmonizerRegistryState.MisuseHandler(target: target, handler: handler)
        state.withLock { $0.setMisuseHandler(handler) }
    }

    /// Hands `error` to the misuse handler, or logs it the first time its name is misused.
    /// Both happen after unlocking: the handler and the log handler are user code.
    func report(_ error: HarmonizerError) {
        switch state.withLock({ $0.misuse(error) }) {
        case .handle(let misuse):
            misuse.target.dispatch { misuse.handler(error) }
        case .log(let isLastName):
            let logger = logger ?? Logger(label: Self.loggerLabel)
            logger.warning(
                "\(error.message)",
                metadata: ["harmonizer": "\(error.name ?? "")", "code": "\(error.code)"]
            )
            if isLastName {
                logger.warning(
                    "misuse of \(HarmonizerRegistryState.loggedNamesLimit) harmonizer names was logged; further names are not"
                )
            }
        case .alreadyLogged:
            break
        }
    }
}
