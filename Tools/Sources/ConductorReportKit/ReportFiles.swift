public import ConductorReports
import Foundation

/// Reads saved reports from files, and writes what the tool draws of them.
///
/// ```swift
/// let reports = try ReportFiles.load(["launch-1.json", "launch-2.json"])
/// try ReportFiles.write(HTMLTimelineRenderer().render(reports[0]), to: "launch.html")
/// ```
public enum ReportFiles {
    public static func load(_ paths: [String]) throws(ReportToolError) -> [RunReport] {
        var reports: [RunReport] = []
        for path in paths { reports.append(try load(path)) }
        return reports
    }

    public static func load(_ path: String) throws(ReportToolError) -> RunReport {
        try load(RunReport.self, from: path)
    }

    /// A report to draw: a launch's keeps its shutdown, whose undos the timeline shows; a
    /// graph run's file reads as a launch never shut down.
    public static func loadLaunch(_ path: String) throws(ReportToolError) -> LaunchReport {
        try load(LaunchReport.self, from: path)
    }

    private static func load<Report: Decodable>(_: Report.Type, from path: String) throws(ReportToolError) -> Report {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw .unreadableReport(path, "no such file, or it cannot be opened")
        }
        do {
            return try JSONDecoder().decode(Report.self, from: data)
        } catch let error as ReportFormatError {
            throw .unreadableReport(path, error.message)
        } catch let error as DecodingError {
            throw .unreadableReport(path, describe(error))
        } catch {
            throw .unreadableReport(path, "\(error)")
        }
    }

    /// Writes `text` to the file at `path`, replacing it.
    ///
    /// - Throws: ``ReportToolError/Code/unwritableOutput``, naming the path.
    public static func write(_ text: String, to path: String) throws(ReportToolError) {
        do {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        } catch {
            throw .unwritableOutput(path)
        }
    }

    private static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let keys = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            return keys.isEmpty ? "" : " at \(keys)"
        }
        switch error {
        case .dataCorrupted(let context): return "not valid JSON\(path(context))"
        case .keyNotFound(let key, let context): return "no '\(key.stringValue)' field\(path(context))"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "a field has the wrong type\(path(context)): \(context.debugDescription)"
        @unknown default: return "\(error)"
        }
    }
}
