import Conductor

/// What the demo reports while it runs, for live progress.
public enum ProgressEvent: Sendable {
    /// A phase began: "launch", "services", "page".
    case phase(String)
    case started(group: String, name: String, at: Duration)
    case ended(group: String, name: String, outcome: Timeline.Outcome, at: Duration, detail: String)
    case marker(Timeline.Marker)
    /// A call is waiting in the request gate, parked behind the token refresh `refresh`.
    case waiting(group: String, name: String, refresh: String, at: Duration)
    /// Something worth a line of its own.
    case note(String)
}

/// Collects the timeline as the demo runs and passes progress on. One clock for everything,
/// so launch, services, page and network share an axis.
final class Recorder: Sendable {
    private struct State {
        var timeline = Timeline()
        var gateLog: [(at: Duration, event: GateEvent)] = []
        var gate = GateTrack()
    }

    /// The gate's journal, once the API exists, and how much of it is logged. Logging holds
    /// this lock, progress lines included: the gate's reader and a milestone's report both
    /// catch up with the journal, and their lines must come out in the journal's order.
    private let gateJournal = Guarded<(read: (@Sendable () -> [GateEvent])?, logged: Int)>((nil, 0))
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

    /// The timeline, each gate call's row with the waits its request had.
    var timeline: Timeline {
        state.withLock { state in
            var timeline = state.timeline
            for index in timeline.rows.indices
            where !["launch", "services", "network"].contains(timeline.rows[index].group) {
                timeline.rows[index].waits = state.gate.waits[timeline.rows[index].name] ?? []
            }
            return timeline
        }
    }

    var gateLog: [(at: Duration, event: GateEvent)] { state.withLock { $0.gateLog } }

    func report(_ event: ProgressEvent) { progress(event) }

    func add(_ row: Timeline.Row) {
        state.withLock { $0.timeline.rows.append(row) }
        progress(.ended(group: row.group, name: row.name, outcome: row.outcome, at: row.end, detail: row.detail))
    }

    func add(_ marker: Timeline.Marker, report: Bool = true) {
        state.withLock { $0.timeline.markers.append(marker) }
        if report { progress(.marker(marker)) }
    }

    /// Follows the gate whose journal `read` returns.
    func attachGate(_ read: @escaping @Sendable () -> [GateEvent]) {
        gateJournal.withLock { $0.read = read }
    }

    /// Logs every gate event journaled so far and not logged yet, in journal order. The
    /// gate's reader calls it for each event; a milestone calls it before it is reported, so
    /// a refresh that ended before the milestone (the calls it held are what the milestone
    /// waited for) is told before it, however late the reader runs.
    func catchUpWithGate() {
        gateJournal.withLock { journal in
            guard let read = journal.read else { return }
            let events = read()
            guard events.count > journal.logged else { return }
            for event in events[journal.logged...] { log(event) }
            journal.logged = events.count
        }
    }

    /// Takes the gate's events as they happen, in order: the refresh and the calls parked
    /// behind it are reported live, not after the page.
    private func log(_ event: GateEvent) {
        let at = now()
        let action = state.withLock { state in
            state.gateLog.append((at, event))
            return state.gate.take(event, at: at)
        }
        switch action {
        case .refreshStarted(let name, let at, let startedBy):
            progress(.started(group: "network", name: name, at: at))
            progress(.note("\(startedBy)'s call was rejected: the token expired; refreshing it once"))
        case .parked(let group, let name, let refresh, let at):
            progress(.waiting(group: group, name: name, refresh: refresh, at: at))
        case .refreshEnded(let row, let marker):
            add(row)
            add(marker, report: false)
        case nil:
            break
        }
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
