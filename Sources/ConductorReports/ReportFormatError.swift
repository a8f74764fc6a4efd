public import Foundation

/// Why a saved report could not be read.
///
/// ```swift
/// import Foundation
///
/// do {
///     let report = try JSONDecoder().decode(RunReport.self, from: data)
/// } catch let error as ReportFormatError where error.code == .unsupportedVersion {
///     print(error.message)  // "the report is format version 2.0; this Conductor reads 1.x: update it"
/// }
/// ```
///
/// A file that is not JSON at all, or whose fields have the wrong types, fails with the
/// decoder's own `DecodingError` instead.
public struct ReportFormatError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong. New codes may be added, so a `switch` should have a `default`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Kind: Hashable, Sendable {
            case notAReport, unsupportedVersion, unknownValue
        }

        fileprivate let kind: Kind

        /// The JSON has no `format` of `"conductor.run-report"` or no readable `version`.
        public static let notAReport = Code(kind: .notAReport)
        /// The report was written in a newer major version of the format, which this version
        /// of Conductor cannot read.
        public static let unsupportedVersion = Code(kind: .unsupportedVersion)
        /// A field holds a value this version does not know, such as an outcome kind or an
        /// error code added later.
        public static let unknownValue = Code(kind: .unknownValue)

        public var description: String { "\(kind)" }
    }

    /// What went wrong.
    public let code: Code
    /// A sentence that names the field or the version.
    public let message: String

    private init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "ReportFormatError.\(code): \(message)" }

    static func notAReport(_ detail: String) -> ReportFormatError {
        ReportFormatError(.notAReport, "not a Conductor run report: \(detail)")
    }

    static func unsupportedVersion(_ version: String, reading major: Int) -> ReportFormatError {
        ReportFormatError(
            .unsupportedVersion,
            "the report is format version \(version); this Conductor reads \(major).x: update it to read the report")
    }

    static func unknownValue(_ value: String, field: String) -> ReportFormatError {
        ReportFormatError(
            .unknownValue, "unknown \(field) '\(value)': the report was written by a newer Conductor")
    }
}

/// What an app shows: `error.localizedDescription` is the message that names the culprit,
/// not Foundation's "The operation could not be completed".
extension ReportFormatError: LocalizedError {
    public var errorDescription: String? { message }
}
