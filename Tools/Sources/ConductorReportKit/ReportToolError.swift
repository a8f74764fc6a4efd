/// Why `conductor-report` could not do what it was asked: a file it could not read or write,
/// an argument it could not use, or reports that are not runs of the same launch. The tool
/// prints the message and exits with status 2, which is not the status of a regression (1).
///
/// ```swift
/// do { _ = try ReportFiles.load(["base.json"]) } catch { print(error.message) }
/// ```
public struct ReportToolError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: Hashable, Sendable {
        /// A report file could not be read or is not a report this version reads.
        case unreadableReport
        /// An argument has the wrong form or names something no report has.
        case badArgument
        /// The base and new reports are not runs of the same launch: they name different
        /// launchers, or share no task.
        case differentRuns
        /// An output file could not be written.
        case unwritableOutput
    }

    public let code: Code
    /// A sentence that names the file or the argument.
    public let message: String

    public var description: String { message }

    static func unreadableReport(_ path: String, _ reason: String) -> ReportToolError {
        ReportToolError(code: .unreadableReport, message: "cannot read the report \(path): \(reason)")
    }

    static func badArgument(_ message: String) -> ReportToolError {
        ReportToolError(code: .badArgument, message: message)
    }

    static func differentRuns(_ message: String) -> ReportToolError {
        ReportToolError(code: .differentRuns, message: message)
    }

    static func unwritableOutput(_ path: String) -> ReportToolError {
        ReportToolError(
            code: .unwritableOutput,
            message: "cannot write \(path): its folder does not exist, or it cannot be written there")
    }
}
