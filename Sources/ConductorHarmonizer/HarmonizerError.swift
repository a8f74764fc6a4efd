public import Foundation

/// An error from creating or using a ``Harmonizer`` or a ``HarmonizerRegistry``.
///
/// Misuse never crashes: creating a harmonizer with bad arguments throws one of these, and
/// a registry count-down that has nothing to count (extra, late, for an unknown name, or
/// anonymous on a harmonizer of named participants) returns `false` and is reported as one
/// of these — logged once per name, or handed to ``HarmonizerRegistry/onMisuse(on:_:)``.
/// Match on ``code`` rather than on the message:
///
/// ```swift
/// do {
///     try registry.create("sing-along", count: 3) { outcome in /* … */ }
/// } catch let error where error.code == .duplicateName {
///     print(error.message)  // "a harmonizer named 'sing-along' is still waiting"
/// }
/// ```
public struct HarmonizerError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong. New codes may be added, so a `switch` should have a `default`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Kind: Hashable, Sendable {
            case emptyName, duplicateName, negativeCount, negativeTimeout, unknownName, extraLeave,
                absentParticipant, anonymousParticipant, harmonizerEnded
        }

        fileprivate let kind: Kind

        /// A harmonizer was created with an empty name.
        public static let emptyName = Code(kind: .emptyName)
        /// A harmonizer was created with the name of one that is still waiting.
        public static let duplicateName = Code(kind: .duplicateName)
        /// A harmonizer was created with a negative initial count.
        public static let negativeCount = Code(kind: .negativeCount)
        /// A harmonizer was created with a negative timeout.
        public static let negativeTimeout = Code(kind: .negativeTimeout)
        /// An operation named no waiting harmonizer: it never existed, or it already finished or was cancelled.
        public static let unknownName = Code(kind: .unknownName)
        /// A `leave` found the counter already at zero.
        public static let extraLeave = Code(kind: .extraLeave)
        /// A `leave` named a participant that has not entered, or has already left.
        public static let absentParticipant = Code(kind: .absentParticipant)
        /// A `leave` or `enter` named no participant, on a harmonizer that waits for named
        /// participants: it cannot tell who left, so it would complete without the one it waits for.
        public static let anonymousParticipant = Code(kind: .anonymousParticipant)
        /// A `leave`, `enter` or stash through a ``HarmonizerRegistry/Participant`` whose
        /// harmonizer has already completed, timed out or been cancelled.
        public static let harmonizerEnded = Code(kind: .harmonizerEnded)

        public var description: String { "\(kind)" }
    }

    /// What went wrong.
    public let code: Code
    /// A sentence that names the culprit.
    public let message: String
    /// The name of the harmonizer the error is about, if any.
    public let name: String?

    package init(_ code: Code, _ message: String, name: String? = nil) {
        self.code = code
        self.message = message
        self.name = name
    }

    public var description: String { "HarmonizerError.\(code): \(message)" }

    static func emptyName() -> HarmonizerError {
        HarmonizerError(.emptyName, "a harmonizer's name is the empty string")
    }

    static func duplicateName(_ name: String) -> HarmonizerError {
        HarmonizerError(.duplicateName, "a harmonizer named '\(name)' is still waiting", name: name)
    }

    static func negativeCount(_ count: Int, name: String?) -> HarmonizerError {
        HarmonizerError(.negativeCount, "\(subject(name)) was given a negative initial count (\(count))", name: name)
    }

    static func negativeTimeout(_ timeout: Duration, name: String?) -> HarmonizerError {
        HarmonizerError(
            .negativeTimeout, "\(subject(name)) was given a negative timeout (\(timeout.shortDescription))", name: name)
    }

    static func unknownName(_ name: String, operation: String) -> HarmonizerError {
        HarmonizerError(
            .unknownName,
            "\(operation)('\(name)') ignored: no harmonizer named '\(name)' is waiting",
            name: name
        )
    }

    /// A handle asked for under a name that is not waiting: thrown, not reported.
    static func unknownName(_ name: String, handleFor participant: String?) -> HarmonizerError {
        HarmonizerError(
            .unknownName,
            "\(handleCall(name, participant)) failed: no harmonizer named '\(name)' is waiting",
            name: name
        )
    }

    static func extraLeave(_ name: String) -> HarmonizerError {
        HarmonizerError(.extraLeave, "leave('\(name)') ignored: its counter is already zero", name: name)
    }

    static func absentParticipant(_ participant: String, in name: String) -> HarmonizerError {
        HarmonizerError(
            .absentParticipant,
            "leave('\(name)', participant: '\(participant)') ignored: '\(participant)' is not present",
            name: name
        )
    }

    static func anonymousParticipant(_ name: String, operation: String) -> HarmonizerError {
        HarmonizerError(
            .anonymousParticipant,
            "\(operation)('\(name)') ignored: harmonizer '\(name)' waits for named participants; name one",
            name: name
        )
    }

    /// A handle for no participant asked of a harmonizer of named participants: thrown.
    static func anonymousParticipant(handleFor name: String) -> HarmonizerError {
        HarmonizerError(
            .anonymousParticipant,
            "\(handleCall(name, nil)) failed: harmonizer '\(name)' waits for named participants; name one",
            name: name
        )
    }

    /// `operation` as called on the handle, such as `leave()`.
    static func harmonizerEnded(_ name: String, participant: String?, operation: String) -> HarmonizerError {
        let who = participant.map { " as '\($0)'" } ?? ""
        return HarmonizerError(
            .harmonizerEnded,
            "\(operation)\(who) ignored: harmonizer '\(name)', which this participant was made for, has ended",
            name: name
        )
    }

    private static func handleCall(_ name: String, _ participant: String?) -> String {
        participant.map { "participant('\($0)', of: '\(name)')" } ?? "participant(of: '\(name)')"
    }

    private static func subject(_ name: String?) -> String {
        name.map { "harmonizer '\($0)'" } ?? "a harmonizer"
    }
}

/// What an app shows: `error.localizedDescription` is the message that names the culprit,
/// not Foundation's "The operation could not be completed".
extension HarmonizerError: LocalizedError {
    public var errorDescription: String? { message }
}

extension HarmonizerError: CodedError { package var codeName: String { "\(code)" } }
