import Conductor

/// What a task noted about itself while it ran — the request it sent, the answer, whether it
/// came from the cache — for the live lines and the timeline's hover titles.
final class CallNotes: Sendable {
    private let notes = Guarded<[String: (detail: String, outcome: Timeline.Outcome?)]>([:])

    func note(_ id: String, _ detail: String, outcome: Timeline.Outcome? = nil) {
        notes.withLock { $0[id] = (detail, outcome) }
    }

    var details: [String: String] { notes.withLock { $0.mapValues(\.detail) } }

    var outcomes: [String: Timeline.Outcome] { notes.withLock { $0.compactMapValues(\.outcome) } }

    func detail(of id: String) -> String { notes.withLock { $0[id]?.detail ?? "" } }

    func outcome(of id: String) -> Timeline.Outcome? { notes.withLock { $0[id]?.outcome } }
}

extension Recorder {
    /// Reports a run's tasks and milestones live as they happen. `offset` is when the run
    /// started on the demo's clock; `group` maps a task to the group it is drawn in.
    func follow(_ run: GraphRun, offset: Duration, notes: CallNotes, group: @escaping @Sendable (String) -> String) {
        run.observe(on: .immediate) { [self] event in follow(event, offset: offset, notes: notes, group: group) }
    }

    /// The same for a launch's events; its readiness sets are marked by the caller, so its
    /// milestone events are not.
    func follow(
        _ events: EventSequence<GraphEvent>, offset: Duration, notes: CallNotes,
        group: @escaping @Sendable (String) -> String
    ) {
        Task {
            for await event in events {
                if case .milestoneReached = event { continue }
                follow(event, offset: offset, notes: notes, group: group)
            }
        }
    }

    private func follow(
        _ event: GraphEvent, offset: Duration, notes: CallNotes, group: @escaping @Sendable (String) -> String
    ) {
        switch event {
        case .taskStarted(let id, let attempt, let at) where attempt == 1:
            report(.started(group: group(id), name: id, at: offset + at))
        case .taskSucceeded(let id, let at):
            ended(id, group(id), notes.outcome(of: id) ?? .succeeded, offset + at, notes.detail(of: id))
        case .taskFailed(let id, let error, let at):
            ended(id, group(id), .failed, offset + at, ErrorText.short(error))
        case .taskTimedOut(let id, let at):
            ended(id, group(id), .timedOut, offset + at, notes.detail(of: id))
        case .taskSkipped(let id, let dependency, let at):
            ended(id, group(id), .skipped, offset + at, "'\(dependency)' did not succeed")
        case .taskCancelled(let id, let at):
            ended(id, group(id), .cancelled, offset + at, notes.detail(of: id))
        case .milestoneReached(let name, let at):
            catchUpWithGate()
            add(Timeline.Marker(kind: .milestone, name: name, at: offset + at))
        default:
            break
        }
    }

    private func ended(_ id: String, _ group: String, _ outcome: Timeline.Outcome, _ at: Duration, _ detail: String) {
        report(.ended(group: group, name: id, outcome: outcome, at: at, detail: detail))
    }
}
