/// `conductor-report diff` without the command line: reads the files, compares them, and says
/// what to print and the exit status.
///
/// ```swift
/// let result = DiffCommand(base: ["base.json"], new: ["new.json"], thresholds: Thresholds(failOver: 0.1)).run()
/// print(result.output)
/// exit(result.status)
/// ```
///
/// The status: 0 when nothing regressed; 1 when the critical path or a named milestone grew
/// over the threshold, or when the new runs did not complete (with or without a threshold);
/// 2 when a report could not be read, an argument could not be used, or the reports are not
/// runs of the same launch.
public struct DiffCommand: Sendable {
    public static let passed: Int32 = 0
    public static let regressed: Int32 = 1
    public static let unusable: Int32 = 2

    public var base: [String]
    public var new: [String]
    public var thresholds: Thresholds

    public init(base: [String], new: [String], thresholds: Thresholds) {
        self.base = base
        self.new = new
        self.thresholds = thresholds
    }

    public func run() -> (output: String, status: Int32) {
        do {
            let comparison = try ReportComparison(
                base: try ReportFiles.load(base), new: try ReportFiles.load(new), thresholds: thresholds)
            return (comparison.text, comparison.regressions.isEmpty ? Self.passed : Self.regressed)
        } catch {
            return ("error: \(error.message)", Self.unusable)
        }
    }
}
