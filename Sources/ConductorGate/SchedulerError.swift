public import Foundation

/// An error from a ``PriorityScheduler``.
///
/// ```swift
/// do {
///     try await scheduler.run { try await sync() }
/// } catch let error as SchedulerError where error.code == .shutDown {
///     // the app is going away: nothing to do
/// }
/// ```
///
/// A ``RequestGate`` never lets it through: its callers see ``GateError`` only.
public struct SchedulerError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong. New codes may be added, so a `switch` should have a `default`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Kind: Hashable, Sendable {
            case shutDown, invalidConfiguration
        }

        fileprivate let kind: Kind

        /// The scheduler was shut down before the work started.
        public static let shutDown = Code(kind: .shutDown)
        /// A count given to ``PriorityScheduler/init(maxConcurrent:agingThreshold:)`` is below 1.
        public static let invalidConfiguration = Code(kind: .invalidConfiguration)

        public var description: String { "\(kind)" }
    }

    /// What went wrong.
    public let code: Code
    /// A sentence saying what happened.
    public let message: String

    private init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "SchedulerError.\(code): \(message)" }

    static func shutDown() -> SchedulerError {
        SchedulerError(.shutDown, "the scheduler is shut down")
    }

    static func invalidConfiguration(_ parameter: String, _ value: Int) -> SchedulerError {
        SchedulerError(.invalidConfiguration, "PriorityScheduler's \(parameter) must be at least 1 (got \(value))")
    }
}

/// What an app shows: `error.localizedDescription` is the message that names the culprit,
/// not Foundation's "The operation could not be completed".
extension SchedulerError: LocalizedError {
    public var errorDescription: String? { message }
}

extension SchedulerError: CodedError { package var codeName: String { "\(code)" } }
