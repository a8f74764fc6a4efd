extension HarmonizerRegistry {
    /// One participant's handle on a harmonizer of a registry: it counts down, counts up and
    /// stashes without looking the name up each time.
    ///
    /// Take it once, where the participant starts, and use it from any thread:
    ///
    /// ```swift
    /// try registry.create("sing-along", count: 4, timeout: .seconds(2)) { outcome in /* … */ }
    /// // In the download module, once:
    /// let download = try registry.participant(of: "sing-along")
    /// // …and when each download is done:
    /// download.stash(url, as: "original-song")
    /// download.leave()
    /// ```
    ///
    /// For a harmonizer of named participants, name the one the handle stands for:
    /// `try registry.participant("lead", of: "sing-along")`.
    ///
    /// A handle keeps the guarantees of counting down by name: the harmonizer completes
    /// exactly once, an extra or late count-down returns `false` and counts nothing, and
    /// misuse is reported as the registry reports it (logged once per name, or handed to
    /// ``HarmonizerRegistry/onMisuse(on:_:)``). It is bound to the harmonizer it was taken
    /// from, not to the name: once that harmonizer has ended, the handle's calls are refused
    /// with ``HarmonizerError/Code/harmonizerEnded``, even if the name is created again. It
    /// keeps that harmonizer (and its outcome) alive for as long as the handle lives.
    ///
    /// - Complexity: ``leave()`` and ``enter()`` of an anonymous participant are one
    ///   atomic add or subtract, as ``Harmonizer/leave()`` is — no lookup, no lock. A named
    ///   participant's take the harmonizer's lock briefly, as ``Harmonizer/leave(_:)`` does.
    public struct Participant: Sendable {
        /// The name of the harmonizer this handle counts.
        public let harmonizerName: String
        /// The participant this handle stands for, or `nil` for an anonymous one.
        public let participantName: String?
        private let harmonizer: Harmonizer
        private let registry: HarmonizerRegistry

        fileprivate init(
            harmonizerName: String,
            participantName: String?,
            harmonizer: Harmonizer,
            registry: HarmonizerRegistry
        ) {
            self.harmonizerName = harmonizerName
            self.participantName = participantName
            self.harmonizer = harmonizer
            self.registry = registry
        }

        /// Counts the harmonizer down; at zero its completion runs and the name is freed.
        /// Returns whether it counted: an extra count-down, or one after the harmonizer
        /// ended, returns `false` and is reported.
        @discardableResult
        public func leave() -> Bool {
            // The anonymous path first, with nothing but the harmonizer's own count-down on it:
            // a handle exists to make this call as cheap as `DispatchGroup.leave()`.
            let result =
                participantName == nil
                ? harmonizer.tryLeaveAnonymously() : harmonizer.tryLeave(participant: participantName)
            if result == .counted || result == .completed { return true }
            reportRefused(result)
            return false
        }

        /// Out of line, so that building the error's message stays off the counting path.
        @inline(never)
        private func reportRefused(_ result: Harmonizer.LeaveResult) {
            switch result {
            case .counted, .completed:
                break
            case .counterAtZero:
                registry.report(.extraLeave(harmonizerName))
            case .finished:
                registry.report(ended("leave()"))
            case .participantAbsent:
                registry.report(.absentParticipant(participantName ?? "", in: harmonizerName))
            case .anonymous:
                // Not reachable: such a handle is refused when taken. Kept for exhaustiveness.
                registry.report(.anonymousParticipant(harmonizerName, operation: "leave"))
            }
        }

        /// Counts the harmonizer up, as this participant. Returns `false`, changing nothing,
        /// once the harmonizer has ended (reported).
        @discardableResult
        public func enter() -> Bool {
            let counted = participantName.map { harmonizer.enter($0) } ?? harmonizer.enter()
            if !counted, harmonizer.isFinished { registry.report(ended("enter()")) }
            return counted
        }

        /// Keeps `value` under `key` for the harmonizer's outcome. Returns `false`, keeping
        /// nothing, once the harmonizer has ended (reported).
        @discardableResult
        public func stash(_ value: some Sendable, as key: String) -> Bool {
            guard harmonizer.stash(value, as: key) else {
                registry.report(ended("stash(as: '\(key)')"))
                return false
            }
            return true
        }

        /// Keeps `value` under a typed `key` for the harmonizer's outcome. Returns `false`,
        /// keeping nothing, once the harmonizer has ended (reported).
        @discardableResult
        public func stash<Value>(_ value: Value, as key: HarmonizerKey<Value>) -> Bool {
            stash(value, as: key.name)
        }

        private func ended(_ operation: String) -> HarmonizerError {
            .harmonizerEnded(harmonizerName, participant: participantName, operation: operation)
        }
    }

    /// A handle on the harmonizer waiting under `name`, for an anonymous participant.
    ///
    /// Throws ``HarmonizerError/Code/unknownName`` when no harmonizer of that name is waiting,
    /// and ``HarmonizerError/Code/anonymousParticipant`` when it waits for named participants
    /// (take ``participant(_:of:)`` then).
    public func participant(of name: String) throws(HarmonizerError) -> Participant {
        try makeParticipant(nil, of: name)
    }

    /// A handle on the harmonizer waiting under `name`, for the participant `participant`.
    ///
    /// Throws ``HarmonizerError/Code/unknownName`` when no harmonizer of that name is waiting.
    /// Whether `participant` is expected is checked at each count-down, as by name.
    public func participant(_ participant: String, of name: String) throws(HarmonizerError) -> Participant {
        try makeParticipant(participant, of: name)
    }

    private func makeParticipant(_ participant: String?, of name: String) throws(HarmonizerError) -> Participant {
        guard let harmonizer = harmonizer(named: name), !harmonizer.isFinished else {
            throw .unknownName(name, handleFor: participant)
        }
        if participant == nil, harmonizer.waitsForNamedParticipants {
            throw .anonymousParticipant(handleFor: name)
        }
        return Participant(harmonizerName: name, participantName: participant, harmonizer: harmonizer, registry: self)
    }
}
