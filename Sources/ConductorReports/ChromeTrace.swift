#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A run's report as Chrome trace-event JSON, to open in Perfetto (ui.perfetto.dev) or
/// `chrome://tracing`.
///
/// ```swift
/// import Foundation
///
/// let report = try await launcher.report()
/// try ChromeTrace(report, processName: "MyApp launch").json
///     .write(to: URL(filePath: "launch.json"), atomically: true, encoding: .utf8)
/// ```
///
/// Each task that ran is one complete (`"X"`) event, its `ts` and `dur` in microseconds from
/// the start of the run, with its outcome, wait time, attempts and executor in `args`, and
/// `args.critical` on the tasks of the critical path, `args.parent` on a subtask. Tasks that never ran (skipped or
/// removed before starting) have none. Each milestone is an instant (`"i"`) event. The `tid`
/// is a lane, named in metadata events: lane 0 is the main actor, and tasks that overlap in
/// time never share a lane, so parallelism shows as stacked rows.
public struct ChromeTrace: Sendable {
    private let report: RunReport
    private let processName: String

    public init(_ report: RunReport, processName: String = "Conductor") {
        self.report = report
        self.processName = processName
    }

    /// A launch's run as a trace.
    public init(_ report: LaunchReport, processName: String = "Conductor") {
        self.init(report.run, processName: processName)
    }

    /// The trace as a JSON object with a `traceEvents` array.
    public var json: String {
        String(decoding: jsonBytes, as: UTF8.self)
    }

    /// The trace as UTF-8 JSON bytes.
    public var jsonBytes: [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Encoding plain strings and integers cannot fail.
        let data = try! encoder.encode(Trace(traceEvents: traceEvents, displayTimeUnit: "ms"))
        return Array(data)
    }

    private struct Trace: Encodable {
        var traceEvents: [TraceEvent]
        var displayTimeUnit: String
    }

    private struct TraceEvent: Encodable {
        var name: String
        var ph: String
        var ts: Int64
        var dur: Int64?
        var pid: Int
        var tid: Int
        var cat: String?
        var s: String?
        var args: Args?
    }

    private struct Args: Encodable {
        var name: String?
        var outcome: String?
        var waitMicroseconds: Int64?
        var attempts: Int?
        var executor: String?
        var critical: Bool?
        var parent: String?

        enum CodingKeys: String, CodingKey {
            case name, outcome, attempts, executor, critical, parent
            case waitMicroseconds = "wait_us"
        }
    }

    private var traceEvents: [TraceEvent] {
        let lanes = report.lanes
        let critical = Set(report.criticalPath)
        var events: [TraceEvent] = [
            TraceEvent(name: "process_name", ph: "M", ts: 0, pid: 1, tid: 0, args: Args(name: processName))
        ]
        for lane in Set(lanes.values).sorted() {
            events.append(
                TraceEvent(
                    name: "thread_name", ph: "M", ts: 0, pid: 1, tid: lane,
                    args: Args(name: lane == 0 ? "main actor" : "lane \(lane)"))
            )
        }
        for task in report.tasks {
            guard let startedAt = task.startedAt, let lane = lanes[task.id] else { continue }
            events.append(
                TraceEvent(
                    name: task.id, ph: "X", ts: startedAt.microseconds,
                    dur: (task.endedAt - startedAt).microseconds, pid: 1, tid: lane,
                    cat: task.stage ?? "task",
                    args: Args(
                        outcome: "\(task.outcome)", waitMicroseconds: task.waitTime?.microseconds,
                        attempts: task.attempts,
                        executor: task.placement, critical: critical.contains(task.id) ? true : nil,
                        parent: task.parent))
            )
        }
        for milestone in report.milestones {
            events.append(
                TraceEvent(name: milestone.name, ph: "i", ts: milestone.at.microseconds, pid: 1, tid: 0, s: "p")
            )
        }
        return events
    }
}
