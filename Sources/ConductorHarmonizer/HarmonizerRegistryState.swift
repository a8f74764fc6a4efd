/// What a ``HarmonizerRegistry`` keeps under its lock: the harmonizers by name, who hears of
/// misuse, and whose misuse has been logged already.
///
/// A pure value: nothing here runs user code or logs. ``misuse(_:)`` decides what becomes of
/// a misuse and returns it as an action, which the registry carries out after unlocking.
struct HarmonizerRegistryState {
    /// The handler installed with ``HarmonizerRegistry/onMisuse(on:_:)``.
    struct MisuseHandler: Sendable {
        var target: CallbackTarget
        var handler: @Sendable (HarmonizerError) -> Void
    }

    /// What the registry does with one misuse, once unlocked.
    enum MisuseAction {
        /// Hand it to the user's handler, which replaces the default log.
        case handle(MisuseHandler)
        /// Log it: the first misuse of its name. `isLastName`: no further name will be logged.
        case log(isLastName: Bool)
        /// Nothing: its name was logged already (or the bound on logged names was reached).
        case alreadyLogged
    }

    /// How many names' misuse is logged. A bound, so that an app misusing generated names
    /// (one per screen, say) cannot grow the registry without end; the last one logged says so.
    static let loggedNamesLimit = 1_024

    private(set) var entries: [String: Harmonizer] = [:]
    private var misuseHandler: MisuseHandler?
    private var loggedNames: Set<String> = []

    /// Keeps `harmonizer` under `name`; throws if a harmonizer of that name is still waiting.
    mutating func register(_ name: String, _ harmonizer: Harmonizer) throws(HarmonizerError) {
        if let existing = entries[name], !existing.isFinished { throw .duplicateName(name) }
        entries[name] = harmonizer
    }

    /// Removes `name` if it still names the harmonizer `id`; returns it, for the caller to
    /// release after unlocking (its stash may hold user objects).
    mutating func remove(_ name: String, _ id: ObjectIdentifier) -> Harmonizer? {
        guard let entry = entries[name], ObjectIdentifier(entry) == id else { return nil }
        entries[name] = nil
        return entry
    }

    /// The names of the harmonizers still waiting, sorted. One that has just completed, timed
    /// out or been cancelled is left out even before its entry is removed.
    var waitingNames: [String] {
        entries.compactMap { name, harmonizer in harmonizer.isFinished ? nil : name }.sorted()
    }

    mutating func setMisuseHandler(_ handler: MisuseHandler) {
        misuseHandler = handler
    }

    /// Decides what becomes of `error`: the handler if one is installed, otherwise a log line
    /// the first time its name is misused.
    mutating func misuse(_ error: HarmonizerError) -> MisuseAction {
        if let misuseHandler { return .handle(misuseHandler) }
        guard loggedNames.count < Self.loggedNamesLimit else { return .alreadyLogged }
        guard loggedNames.insert(error.name ?? "").inserted else { return .alreadyLogged }
        return .log(isLastName: loggedNames.count == Self.loggedNamesLimit)
    }
}
