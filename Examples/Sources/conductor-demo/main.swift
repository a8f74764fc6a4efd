public import ArgumentParser
import Conductor
public import DemoKit
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `swift run --package-path Examples conductor-demo`: a shopping app's product page,
/// launched and loaded over loopback HTTP, then drawn as a timeline.
@main
struct ConductorDemo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "conductor-demo",
        abstract: "Launch a shop app and load its product page over loopback HTTP, then draw the timeline.",
        subcommands: [OfflineOrderCommand.self]
    )

    // The parser lists the values itself, from `Scenario.allCases`.
    @Option(help: "What the network and the server do to the app.")
    var scenario: Scenario = .tokenExpiry

    @Option(help: "Seeds the server's latencies and the backoff jitter.")
    var seed: UInt64 = 7

    @Option(help: "Multiplies every latency and time limit: above 0, and 0.1 runs ten times faster.")
    var latencyScale: Double = 1

    @Option(help: "Where trace.json and timeline.html go.")
    var out: String = "./conductor-demo-out"

    func validate() throws {
        if let problem = DemoOptions.latencyScaleProblem(latencyScale) { throw ValidationError(problem) }
    }

    mutating func run() async throws {
        let options = DemoOptions(scenario: scenario, seed: seed, latencyScale: latencyScale)
        say("Conductor demo — scenario \(scenario), seed \(seed), latency ×\(latencyScale)\n")
        let console = Console(interactive: isatty(STDOUT_FILENO) != 0)
        let report = try await runDemo(options) { event in console.show(event) }
        console.finish()

        say("\nTimeline\n" + TextTimeline.render(report.timeline))
        say("\n" + TextTimeline.summary(report))
        say(
            "\nSpans of one request — what your tracer receives (\(report.spanTree.spanCount) spans in all)\n"
                + TelemetryText.render(report.spanTree))
        say("\nMetrics — what your metrics backend receives\n" + TelemetryText.render(report.metrics))

        let directory = URL(fileURLWithPath: out, isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let trace = directory.appendingPathComponent("trace.json")
        let page = directory.appendingPathComponent("timeline.html")
        try TraceJSON.render(report.timeline, title: "conductor-demo \(scenario)").write(to: trace)
        try Data(TimelineHTML.render(report).utf8).write(to: page)
        // The library's own renderer, one file per run.
        try Data(ChromeTrace(report.launchReport, processName: "launch").jsonBytes)
            .write(to: directory.appendingPathComponent("launch.trace.json"))
        try Data(ChromeTrace(report.pageReport, processName: "product page").jsonBytes)
            .write(to: directory.appendingPathComponent("page.trace.json"))
        // The reports themselves, saved as `conductor-report` reads them.
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(report.launchReport).write(to: directory.appendingPathComponent("launch.report.json"))
        try encoder.encode(report.pageReport).write(to: directory.appendingPathComponent("page.report.json"))
        say("\nWrote, in \(directory.path):")
        say("  trace.json          open in ui.perfetto.dev")
        say("  timeline.html       open in a browser")
        say("  launch.trace.json, page.trace.json: the library's own traces of each run")
        say("  launch.report.json, page.report.json: the runs' reports, for conductor-report (Tools/)")
        // One clause a line: a verdict reads at a glance in an 80-column terminal.
        say("\n\(report.passed ? "✔" : "✘") " + report.verdict.replacingOccurrences(of: "; ", with: ";\n  "))
        if !report.passed { throw ExitCode.failure }
    }
}

extension Scenario: ExpressibleByArgument {}

/// `conductor-demo offline-order`: the shop app places an order with both mirrors down, is
/// killed, and restarts; the order is placed once. The app is this executable again, run by
/// the story with the hidden `--app-…` options.
struct OfflineOrderCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "offline-order",
        abstract: "Place an order with both mirrors down, kill the app, restart it: the order is placed once."
    )

    @Option(help: .hidden) var appDatabase: String?
    @Option(help: .hidden) var appMirror: [String] = []
    @Option(help: .hidden) var appOrder: String?

    func validate() throws {
        if appDatabase == nil, !appMirror.isEmpty || appOrder != nil {
            throw ValidationError("--app-mirror and --app-order need --app-database")
        }
        for mirror in appMirror where URL(string: mirror)?.host == nil {
            throw ValidationError("--app-mirror must be a URL such as http://127.0.0.1:8080 (got \(mirror))")
        }
    }

    mutating func run() async throws {
        if let appDatabase {
            let app = OrderApp(database: appDatabase, mirrors: appMirror.compactMap(URL.init(string:)))
            if try await !app.run(placing: appOrder, say: say) { throw ExitCode.failure }
            return
        }
        say("Conductor demo — an order placed offline, the app killed and restarted\n")
        let report = try await runOfflineOrder(OfflineOrderOptions(), say: say)
        say("\n\(report.passed ? "✔" : "✘") " + report.verdict.replacingOccurrences(of: "; ", with: ";\n  "))
        if !report.passed { throw ExitCode.failure }
    }
}

/// Writes a line to standard output unbuffered, in order with the live progress.
func say(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
}

/// Live progress: a line per task as it starts and ends; on a terminal, a progress bar below
/// the lines that redraws in place.
final class Console: Sendable {
    private let interactive: Bool
    private let counts = Mutexed((started: 0, ended: 0))

    init(interactive: Bool) { self.interactive = interactive }

    func show(_ event: ProgressEvent) {
        let line: String?
        switch event {
        case .phase(let name):
            line = "── \(name)"
        case .started(let group, let name, let at):
            counts.update { $0.started += 1 }
            line = "\(stamp(at))  ▶ \(group)/\(name)"
        case .ended(let group, let name, let outcome, let at, let detail):
            counts.update { $0.ended += 1 }
            let mark = outcome == .succeeded ? "✓" : outcome == .fromCache ? "↺" : "✗"
            line = "\(stamp(at))  \(mark) \(group)/\(name) \(outcome.rawValue)\(detail.isEmpty ? "" : " — \(detail)")"
        case .waiting(let group, let name, let refresh, let at):
            line = "\(stamp(at))  ⏸ \(group)/\(name) waits for \(refresh)"
        case .marker(let marker):
            line = "\(stamp(marker.at))  ◆ \(marker.label)"
        case .note(let text):
            line = "   \(text)"
        }
        let (started, ended) = counts.update { ($0.started, $0.ended) }
        var output = ""
        if interactive { output += "\r\u{1B}[K" }
        if let line { output += line + "\n" }
        if interactive { output += bar(ended: ended, started: started) }
        FileHandle.standardOutput.write(Data(output.utf8))
    }

    func finish() {
        if interactive { FileHandle.standardOutput.write(Data("\r\u{1B}[K".utf8)) }
    }

    private func stamp(_ at: Duration) -> String {
        let ms = Int(Double(at.components.seconds) * 1000 + Double(at.components.attoseconds) / 1e15)
        let text = "\(ms) ms"
        return String(repeating: " ", count: max(0, 8 - text.count)) + text
    }

    private func bar(ended: Int, started: Int) -> String {
        let width = 30
        let filled = started == 0 ? 0 : min(width, width * ended / max(started, 1))
        return "[" + String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
            + "] \(ended)/\(started) tasks ended"
    }
}

/// A value behind an `NSLock` (progress arrives from many tasks at once).
final class Mutexed<Value>: @unchecked Sendable {
    // `@unchecked Sendable` is safe: `value` is only touched inside `update`, under `lock`.
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func update<Result>(_ body: (inout Value) -> Result) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}
