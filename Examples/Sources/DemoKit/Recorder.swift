import Conductor

/// What the demo reports while it runs, for live progress.
public enum ProgressEvent: Sendable {
    /// A phase began: "launch", "services", "page".
    case phase(String)
    case started(group: String, name: String, at: Duration)
    case ended(group: String, name: String, outcome: Timeline.Outcome, at: Duration, detail: String)
    case marker(Timeline.Marker)
    /// Something worth a line of its own.
    case note(String)
}

/// Collects the timeline as the demo runs and passes progress on. One clock for everything,
/// so launch, services, page and network share an axis.
final class Recorder: Sendable {
    private struct State {
        var timeline = Timeline()
        var gateLog: [(at: Duration, event: GateEvent)] = []
    }

    private let clock = ContinuousClock()
    private let origin: ContinuousClock.Instant
    private let state = Guarded(State())
    private let progress: @Sendable (ProgressEvent) -> Void

    init(progress: @escaping @Sendable (ProgressEvent) -> Void) {
        self.origin = clock.now
        self.progress = progress
    }

    /// Time since the demo started.
    func now() -> Duration { clock.now - origin }

    var timeline: Timeline { state.withLock { $0.timeline } }

    var gateLog: [(at: Duration, event: GateEvent)] { state.withLock { $0.gateLog } }

    func report(_ event: ProgressEvent) { progress(event) }

    func add(_ row: Timeline.Row) {
        state.withLock { $0.timeline.rows.append(row) }
        progress(.ended(group: row.group, name: row.name, outcome: row.outcome, at: row.end, detail: row.detail))
    }

    func add(_ marker: Timeline.Marker) {
        state.withLock { $0.timeline.markers.append(marker) }
        progress(.marker(marker))
    }

    func log(_ event: GateEvent) {
        let at = now()
        state.withLock { $0.gateLog.append((at, event)) }
    }

    /// Runs `body` as one row of `group`, reporting its start and end.
    func measure<Value>(
        _ group: String, _ name: String, detail: String = "",
        _ body: () async throws -> Value
    ) async rethrows -> Value {
        let start = now()
        progress(.started(group: group, name: name, at: start))
        do {
            let value = try await body()
            add(Timeline.Row(group: group, name: name, start: start, end: now(), outcome: .succeeded, detail: detail))
            return value
        } catch {
            let outcome: Timeline.Outcome = Task.isCancelled || error is CancellationError ? .cancelled : .failed
            let row = Timeline.Row(
                group: group, name: name, start: start, end: now(), outcome: outcome,
                detail: [detail, ErrorText.short(error)].filter { !$0.isEmpty }.joined(separator: " · "))
            add(row)
            throw error
        }
    }

    /// Adds a run's tasks as rows, shifted by `offset` (when the run started on the demo's
    /// clock); `group` names the rows of tasks outside a stage. `details` and `outcomes`
    /// refine what the report says (a success served from the cache, say).
    func addRows(
        from report: RunReport, offset: Duration, group: String,
        details: [String: String] = [:], outcomes: [String: Timeline.Outcome] = [:]
    ) {
        let rows = report.tasks.map { task in
            let outcome: Timeline.Outcome =
                switch task.outcome {
                case .succeeded: outcomes[task.id] ?? .succeeded
                case .failed: .failed
                case .timedOut: .timedOut
                case .skipped: .skipped
                case .cancelled: .cancelled
                }
            var detail = details[task.id] ?? ""
            if !task.outcome.isSuccess {
                detail = [detail, task.outcome.shortDescription].filter { !$0.isEmpty }.joined(separator: " · ")
            }
            if task.attempts > 1 { detail += " · \(task.attempts) attempts" }
            let end = offset + task.endedAt
            return Timeline.Row(
                group: task.stage ?? group, name: task.id, start: offset + (task.startedAt ?? task.endedAt),
                end: end, outcome: outcome, detail: detail)
        }
        state.withLock { $0.timeline.rows.append(contentsOf: rows) }
    }
}

extension TaskOutcome {
    /// The outcome in a few words, an error as ``ErrorText`` says it.
    var shortDescription: String {
        if case .failed(let error) = self { return "failed: \(ErrorText.short(error))" }
        return description
    }
}
