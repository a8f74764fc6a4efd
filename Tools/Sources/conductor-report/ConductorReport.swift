import ArgumentParser
import ConductorReportKit
import ConductorReports
import Foundation

/// Reads saved launch and run reports: compares them for CI, and draws them.
@main
struct ConductorReport: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "conductor-report",
        abstract: "Compare and draw saved Conductor run reports (JSON written with JSONEncoder).",
        subcommands: [Diff.self, Timeline.self, HTML.self, Trace.self]
    )

    /// Parses and runs the command like ArgumentParser's own `main()`, but exits with 2, the
    /// status of every unusable input, for an argument the parser or a `validate()` refused
    /// (its 64), so a script tells a bad call from a regression (1) by one status.
    static func main() {
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch {
            if exitCode(for: error) == .validationFailure {
                FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
                exit(withError: ExitCode(DiffCommand.unusable))
            }
            exit(withError: error)
        }
    }
}

struct Diff: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Compare a new report with a base one; exit 1 when the critical path or a milestone regressed.",
        discussion: """
            Give one report a side (diff BASE NEW), or several runs a side with --base and --new: \
            each side is then the median of its runs, so one slow run neither fails nor passes CI. \
            Exit status: 0 no regression; 1 a regression, or new runs that did not complete (with or \
            without --fail-over); 2 a report could not be read, an argument could not be used, or \
            the reports are not runs of the same launch (different launchers, or no task in common).
            """
    )

    @Argument(help: "BASE NEW: one report on each side (or use --base and --new).")
    var reports: [String] = []

    @Option(parsing: .upToNextOption, help: "The base reports: the baseline's runs.")
    var base: [String] = []

    @Option(parsing: .upToNextOption, help: "The new reports: this build's runs.")
    var new: [String] = []

    @Option(help: "Fail when the critical path or a milestone grew by more than this, such as 10%.")
    var failOver: String?

    @Option(help: "Ignore changes smaller than this, such as 5ms: the noise floor.")
    var minChange: String = "1ms"

    @Option(help: "A milestone to check as well as the critical path; repeat for several.")
    var milestone: [String] = []

    func validate() throws {
        _ = try thresholds()
        if reports.isEmpty {
            guard !base.isEmpty, !new.isEmpty else {
                throw ValidationError("give BASE NEW, or --base and --new with a report each at least")
            }
        } else {
            guard reports.count == 2, base.isEmpty, new.isEmpty else {
                throw ValidationError("give exactly two reports, BASE NEW, or use --base and --new")
            }
        }
    }

    /// The thresholds the options give; a ``ValidationError`` for one that is not a percentage
    /// or a duration, which `validate()` throws before anything is read.
    private func thresholds() throws(ValidationError) -> Thresholds {
        do throws(ReportToolError) {
            return Thresholds(
                failOver: try failOver.map(Thresholds.percentage), minChange: try Thresholds.duration(minChange),
                milestones: milestone)
        } catch {
            throw ValidationError(error.message)
        }
    }

    func run() throws {
        let command = DiffCommand(
            base: reports.isEmpty ? base : [reports[0]], new: reports.isEmpty ? new : [reports[1]],
            thresholds: try thresholds())
        let result = command.run()
        if result.status == DiffCommand.unusable {
            FileHandle.standardError.write(Data((result.output + "\n").utf8))
        } else {
            print(result.output)
        }
        if result.status != DiffCommand.passed { throw ExitCode(result.status) }
    }
}

/// A report file argument, read for the rendering commands.
struct ReportArgument: ParsableArguments {
    @Argument(help: "A saved report (JSON).")
    var report: String

    func load() throws -> LaunchReport {
        do {
            return try ReportFiles.loadLaunch(report)
        } catch {
            FileHandle.standardError.write(Data("error: \(error.message)\n".utf8))
            throw ExitCode(DiffCommand.unusable)
        }
    }
}

struct Timeline: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print a report as the text timeline.")

    @OptionGroup var input: ReportArgument

    @Option(help: "Columns the run's duration spans.")
    var width: Int = 50

    func run() throws {
        print(TimelineRenderer(width: width).render(try input.load()))
    }
}

struct HTML: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "html", abstract: "Write a report as a self-contained HTML page.")

    @OptionGroup var input: ReportArgument

    @Option(name: .shortAndLong, help: "Where to write the page; standard output if not given.")
    var output: String?

    @Option(help: "The page's title.")
    var title: String = "Conductor run"

    func run() throws {
        let page = HTMLTimelineRenderer().render(try input.load(), title: title)
        try write(page, to: output)
    }
}

struct Trace: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a report as a Chrome trace, for ui.perfetto.dev or chrome://tracing.")

    @OptionGroup var input: ReportArgument

    @Option(name: .shortAndLong, help: "Where to write the trace; standard output if not given.")
    var output: String?

    @Option(help: "The process name the trace viewer shows.")
    var processName: String = "Conductor"

    func run() throws {
        try write(ChromeTrace(try input.load(), processName: processName).json, to: output)
    }
}

/// Prints `text`, or writes it to `path`; a path that cannot be written is an unusable
/// input: its sentence on standard error, and status 2.
private func write(_ text: String, to path: String?) throws {
    guard let path else {
        print(text)
        return
    }
    do {
        try ReportFiles.write(text, to: path)
    } catch {
        FileHandle.standardError.write(Data("error: \(error.message)\n".utf8))
        throw ExitCode(DiffCommand.unusable)
    }
}
