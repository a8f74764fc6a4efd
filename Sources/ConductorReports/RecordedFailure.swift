/// A task's failure as a saved report recorded it: the error's type, its code when it had one,
/// and its message. Decoding a report gives this in place of the error the task threw, which
/// a file cannot hold.
///
/// A live report — the one ``GraphRun/report()`` or ``Launcher/report()`` returns — keeps the
/// error value itself: a task's ``TaskOutcome/failed(_:)``, an undo's ``UndoOutcome/failed(_:)``,
/// and the run's ``GraphError/underlyingError``. A decoded one has the three recorded values
/// only: its tasks and undos fail with a `RecordedFailure`, and its run's ``GraphError`` has
/// no `underlyingError`. Match a saved failure by ``typeName`` and ``code``, not with `as?`.
///
/// ```swift
/// import Foundation
///
/// let report = try JSONDecoder().decode(RunReport.self, from: data)
/// if case .failed(let error as RecordedFailure) = report["config"]?.outcome {
///     print(error.typeName, error.code ?? "-", error.message)  // "MyApp.ConfigError", nil, "offline"
/// }
/// ```
///
/// Conductor's own errors (``GraphError``, ``LaunchError``, ``GateError`` and the others) are
/// recorded with their ``GraphError/Code`` as text, so `code == "timedOut"` matches a saved
/// timeout. Encoding a report again writes the same three values back.
public struct RecordedFailure: Error, Hashable, Sendable, CustomStringConvertible {
    /// The error's type as the program that wrote the report named it, with its module:
    /// `"Conductor.GraphError"`, `"MyApp.ConfigError"`.
    public let typeName: String
    /// The error's code, for errors that have one: the description of a Conductor error's
    /// `code`, such as `"taskFailed"`.
    public let code: String?
    /// What the error said: a Conductor error's `message`, or any other error's description.
    public let message: String

    public init(typeName: String, code: String?, message: String) {
        self.typeName = typeName
        self.code = code
        self.message = message
    }

    /// How the original error would have printed: `"GraphError.timedOut: …"` for an error
    /// with a code, its message otherwise.
    public var description: String {
        guard let code else { return message }
        let shortName = typeName.split(separator: ".").last.map(String.init) ?? typeName
        return "\(shortName).\(code): \(message)"
    }

    /// What a report records of `error`.
    init(recording error: any Error) {
        switch error {
        case let recorded as RecordedFailure:
            self = recorded
        case let error as any CodedError:
            // "Conductor.GraphError" whichever module declares it: the name reports have
            // always carried, which a diff of an older report against a newer one compares.
            self.init(typeName: "Conductor.\(type(of: error))", code: error.codeName, message: error.message)
        default:
            self.init(
                typeName: String(reflecting: type(of: error)), code: nil, message: String(describing: error))
        }
    }
}
